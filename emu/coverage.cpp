// emu/coverage.cpp: hipattn_emu_coverage CODE_OBJECT...
//
// Lists, for every kernel of every code object given, the instructions (llvm-objdump mnemonics) the
// emulator has no semantics for (emu::implemented), and those its timing layer has no rule for
// (emu::classify, timing.hpp). Exit status 1 when any is missing (each printed with the kernels that
// use it), 2 when a code object cannot be read, else 0 after a summary: code objects, kernels,
// distinct mnemonics.
#include <cstdio>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "emu.hpp"
#include "timing.hpp"

namespace {

std::string shorten(const std::string& s, size_t n = 160) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

}  // namespace

int main(int argc, char** argv) {
  using namespace hipattn::emu;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CODE_OBJECT...\n", argv[0]);
    return 2;
  }
  // mnemonic -> "<code object>: <kernel>" of every kernel using it
  std::map<std::string, std::vector<std::string>> missing, untimed;
  std::set<std::string> all;
  size_t kernels = 0;
  for (int i = 1; i < argc; ++i) {
    std::shared_ptr<const CodeObject> co;
    try {
      co = CodeObject::load(argv[i]);
      co->disassemble_all();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cannot load %s: %s\n", argv[i], e.what());
      return 2;
    }
    size_t ok = 0, bad = 0;
    for (const KernelInfo& k : co->kernels()) {
      ++kernels;
      bool any = false;
      for (const std::string& m : untimed_mnemonics(*co, k)) {
        untimed[m].push_back(std::string(gfx_name(co->gfx())) + " " + shorten(k.label()));
        any = true;
      }
      for (const std::string& m : co->mnemonics(k)) {
        all.insert(m);
        if (!implemented(m)) {
          missing[m].push_back(std::string(gfx_name(co->gfx())) + " " + shorten(k.label()));
          any = true;
        }
      }
      (any ? bad : ok) += 1;
    }
    std::printf("%s (%s): %zu kernels, %zu fully covered, %zu with missing or untimed instructions\n", argv[i],
                gfx_name(co->gfx()), co->kernels().size(), ok, bad);
  }
  auto list = [&](const std::map<std::string, std::vector<std::string>>& m, const char* what) {
    std::printf("\n%zu of %zu distinct mnemonics have %s:\n", m.size(), all.size(), what);
    for (const auto& [name, users] : m) {
      std::printf("  %s  (%zu kernels)\n", name.c_str(), users.size());
      const size_t show = users.size() < 5 ? users.size() : 5;
      for (size_t j = 0; j < show; ++j) std::printf("      %s\n", users[j].c_str());
      if (users.size() > show) std::printf("      ... and %zu more\n", users.size() - show);
    }
  };
  if (!missing.empty()) list(missing, "no semantics in the emulator");
  if (!untimed.empty()) list(untimed, "no rule in the timing layer (emu/timing.cpp classify)");
  if (!missing.empty() || !untimed.empty()) return 1;
  std::printf("\nall covered and timed: %d code objects, %zu kernels, %zu distinct mnemonics\n", argc - 1, kernels,
              all.size());
  return 0;
}
