#pragma once
// A host header that shares a name with one of epochrt's: epochrt's headers
// must never pick it up (they include <epochrt/...>).
#error "a host header replaced one of epochrt's"
