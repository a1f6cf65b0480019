// See README.md: names only, for torch's ProcessGroupGloo.hpp.
#pragma once
