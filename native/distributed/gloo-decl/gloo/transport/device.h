// See README.md: names only, for torch's ProcessGroupGloo.hpp.
#pragma once
namespace gloo::transport {
class Device;
class UnboundBuffer;
}  // namespace gloo::transport
