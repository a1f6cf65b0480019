// What other bindings need of the distributed concern: the group behind a JS handle (the train step's `group`
// option) and the broadcast of a parameter map.
#pragma once
#include <napi.h>

#include <map>
#include <memory>
#include <string>

#include "distributed/group.h"

namespace lamer::dist {

// The group behind a NativeDistGroup handle; E_ARG for anything else, E_DIST once closed.
std::shared_ptr<Group> UnwrapGroup(const Napi::Value& value, const char* what);
// Overwrites every tensor of `params` (in name order) with rank root's.
void BroadcastParameters(Group& group, std::map<std::string, at::Tensor>& params, int root);

}  // namespace lamer::dist
