/* ct_vtk.h — a run file's frames as a VTK time series that ParaView opens directly.
 *
 * ct_vtk_export reads /mesh (rest positions X, elements, vertex_body) and /frames (time, x, v, and
 * the optional contact_force, gap, beta) of a run file (DESIGN §6) and writes into a directory
 *   frame_NNNNN.vtu   one VTK XML UnstructuredGrid per frame (ASCII): the deformed points (z = 0 in
 *                     2D), the elements (tetrahedra in 3D, triangles in 2D), and point data
 *                     displacement (x − X, m), velocity (m/s) and body (the vertex's body index),
 *                     and when the run has them (/frames/contact_force, gap, beta: the model's
 *                     per-vertex contact fields, ct_model.h) contact_force (N, 3 components),
 *                     gap (m, NaN where a vertex has no contact) and beta; these three are written
 *                     in the inline binary format (base64), since VTK's ASCII reader cannot read NaN;
 *   run.pvd           the collection of the frames with their times (s): open this one.
 * The directory is created if missing; existing frame files are overwritten.
 * layer: io */
#ifndef CT_VTK_H
#define CT_VTK_H

#include "ct_status.h"

/* CT_EINPUT (with the file and dataset named in diag) for a run file without frames or with
 * inconsistent sizes, CT_EIO when the directory or a file cannot be written. *nframes (if not
 * NULL): the frames written. */
ct_status ct_vtk_export(const char *run_file, const char *dir, int *nframes, ct_diag *diag);

#endif
