/* fuzz_scene.c — libFuzzer target: a scene text through the parser and, when it parses, the
 * simulation's set-up (meshes, selections, model init) as `contactlab check` does. Relative mesh
 * paths resolve against tests/data/scenes (the seed scenes' folder). Any crash, leak or sanitizer
 * report is a finding; a refused input (CT_EINPUT) is the expected outcome. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    fuzz_check_scene(text, "fuzz.json", "tests/data/scenes", NULL, 0);
    free(text);
    return 0;
}
