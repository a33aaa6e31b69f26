/* fuzz_set.c — libFuzzer target: `--set key.path=value` overrides (one per input line, at most 8)
 * applied to a small valid scene, then parsed and set up as `contactlab check` does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const scene =
    "{\"dim\": 3, \"time\": {\"dt\": 0.01, \"duration\": 0.02}, \"gravity\": [0, -9.81, 0],"
    " \"contact\": {\"model\": \"ipc\", \"dhat\": 0.001},"
    " \"bodies\": [{\"name\": \"box\", \"mesh\": {\"generator\": \"box\", \"size\": [0.1, 0.1, 0.1], \"cells\": [1, 1, 1]},"
    "   \"material\": {\"E\": 1e5, \"nu\": 0.3, \"density\": 1000}, \"fixed\": {\"select\": {\"side\": \"-y\"}},"
    "   \"loads\": [{\"select\": {\"side\": \"+y\"}, \"force\": [0, -1, 0]}]}],"
    " \"obstacles\": [{\"name\": \"ground\", \"type\": \"halfspace\", \"point\": [0, -0.01, 0], \"normal\": [0, 1, 0]}],"
    " \"probes\": [{\"name\": \"top\", \"quantity\": \"mean_position\", \"select\": {\"body\": \"box\", \"side\": \"+y\"}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *ov[8];
    int n = 0;
    for (char *line = text; line && n < 8;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        ov[n++] = line;
        line = nl ? nl + 1 : NULL;
    }
    fuzz_check_scene(scene, "fuzz_set.json", ".", ov, n);
    free(text);
    return 0;
}
