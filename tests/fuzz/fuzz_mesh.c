/* fuzz_mesh.c — libFuzzer target: the mesh readers. The first byte picks the format and dimension
 * (bit 0: .obj instead of .msh; bit 1: dim 2), the rest is the file, written to an anonymous
 * memory file (memfd) and read through its /proc path, then validated and its surface built. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "contactlab/ct_mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const int obj = data[0] & 1, dim = (data[0] & 2) ? 2 : 3;
    int fd = memfd_create("fuzz_mesh", 0);
    if (fd < 0) return 0;
    const uint8_t *p = data + 1;
    size_t left = size - 1;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w <= 0) break;
        p += w;
        left -= (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    /* the reader picks the format by the extension: a symlink with the right one */
    char link[96];
    snprintf(link, sizeof link, "/tmp/fuzz_mesh_%d.%s", (int)getpid(), obj ? "obj" : "msh");
    unlink(link);
    if (symlink(path, link) == 0) {
        ct_diag d;
        ct_diag_init(&d);
        d.max_msgs = 64;
        ct_mesh m;
        if (ct_mesh_read(&m, link, dim, &d) == CT_OK) {
            if (ct_mesh_validate(&m, link, &d) == CT_OK) {
                ct_surface s;
                if (ct_surface_build(&s, &m, &d) == CT_OK) ct_surface_free(&s);
            }
            ct_mesh_free(&m);
        }
        ct_diag_free(&d);
        unlink(link);
    }
    close(fd);
    return 0;
}
