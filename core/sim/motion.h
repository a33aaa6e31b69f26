/* motion.h — private to core/sim: the rotation shared by the mesh transforms and the scripted
 * motion (motion.c). */
#ifndef CT_SIM_MOTION_H
#define CT_SIM_MOTION_H

/* Rotate p (dim entries) in place by `angle` (rad) about `axis` through the origin (3D; 2D: about
 * z, the axis unused). */
void ct_rotate_point(int dim, const double *axis, double angle, double *p);

#endif
