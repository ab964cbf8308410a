// hipattn/numeric/numeric.hpp: umbrella header for the element types, Vec, FastDivmod and DType traits.
#pragma once

#include "hipattn/numeric/bf16.hpp"
#include "hipattn/numeric/dtype.hpp"
#include "hipattn/numeric/fast_div.hpp"
#include "hipattn/numeric/fp16.hpp"
#include "hipattn/numeric/fp8.hpp"
#include "hipattn/numeric/traits.hpp"
#include "hipattn/numeric/vec.hpp"
