// See README.md: names only, for torch's ProcessGroupGloo.hpp. Its inline setTimeout() names Context::setTimeout;
// the addon never calls it (the function is compiled, and called, inside libtorch).
#pragma once
#include <chrono>
namespace gloo {
class Context {
 public:
  void setTimeout(std::chrono::milliseconds timeout);
};
}  // namespace gloo
