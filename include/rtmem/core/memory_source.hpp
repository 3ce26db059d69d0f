// Memory sources: the only rtmem pieces that talk to the OS or the C heap.
#pragma once
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/core/page_allocator.hpp"
#include "rtmem/core/virtual_memory.hpp"
