// tests/emu/kernels/planner.hip: the decode work planner (kernels/common/task_plan.hpp) for the AMD
// targets, run on the emulator by test_emu_planner.cpp against the host plan.
#include "hipattn/kernels/common/task_plan.hpp"

template __global__ void hipattn::plan_decode_tasks_kernel<hipattn::kPlannerThreads>(const hipattn::DecodePlanArgs);
