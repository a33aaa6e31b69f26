/* scene_body.h — internal: the body half of the scene schema (scene_body.c). */
#ifndef CT_SCENE_BODY_H
#define CT_SCENE_BODY_H

#include "contactlab/ct_scene.h"
#include "io/scene_json.h"

/* "bodies": array of bodies (required, >= 1) into sc->bodies. */
void ct_scene_read_bodies(sj *c, json_t *root, ct_scene *sc);
/* "obstacles": optional array of half-spaces into sc->obstacles. */
void ct_scene_read_obstacles(sj *c, json_t *root, ct_scene *sc);
/* Body and obstacle names must be unique together. */
void ct_scene_check_participant_names(sj *c, const ct_scene *sc);
/* dir + "/" + file, or file when it is absolute or dir is empty (malloc'ed; NULL: no memory). */
char *ct_scene_join_path(const char *dir, const char *file);
/* SELECTOR at obj[key]. Inside body `body` (>= 0) it defaults to "all"; a probe selector
 * (body < 0) is required and must name its body ("body": name or "all"). Returns 1 if valid. */
int ct_scene_read_selector(sj *c, json_t *obj, const char *key, const ct_scene *sc, int body,
                        ct_selector *sel);

#endif
