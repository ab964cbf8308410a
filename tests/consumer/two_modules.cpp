// Two shared objects in one process, each over an instance library of its own (libconsumer_a: bf16
// d128, libconsumer_b: f16 d64), as two Python extensions of one interpreter: each must see its own
// registry and launch its own instances (hipattn/dispatch/prebuilt.hpp: the registry and the entry
// points are private to the module that links them). Plain C++: this program compiles no hipattn code.
#include <cstdio>

extern "C" int consumer_a_check();
extern "C" int consumer_b_check();

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the modules' lines in order, also when one aborts
  const int a = consumer_a_check();
  const int b = consumer_b_check();
  std::printf("hipattn prebuilt consumer: %d failed checks in module a, %d in module b\n", a, b);
  return a == 0 && b == 0 ? 0 : 1;
}
