// LD_PRELOAD shim for gen_embed_refs.py: waits a moment when a process exits, so that
// llama.cpp's logger thread can write out what is still queued. llama.cpp's tools print
// their results through an asynchronous logger whose singleton is deliberately leaked
// (common/log.cpp, "logs may be lost if not flushed before the program exits"), and
// llama-embedding's JSON came out cut short without this.
//   gcc -shared -fPIC -O1 -o linger_at_exit.so tests/scripts/linger_at_exit.c
#include <unistd.h>

__attribute__((destructor)) static void linger_at_exit(void) {
    usleep(300 * 1000);
}
