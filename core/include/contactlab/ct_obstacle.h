/* ct_obstacle.h — analytic contact partners of the bodies: half-spaces.
 * layer: contact */
#ifndef CT_OBSTACLE_H
#define CT_OBSTACLE_H

/* An analytic half-space obstacle {y : n.(y - p) >= 0}. */
typedef struct ct_obstacle {
    const char *name;
    double point[3];
    double normal[3]; /* unit */
} ct_obstacle;

#endif
