/* ct_cli.h — the contactlab command line (DESIGN §7). Exit status: 0 ok, 1 run failed,
 * 2 bad input.
 * layer: io */
#ifndef CT_CLI_H
#define CT_CLI_H

int ct_cli_main(int argc, char **argv);

/* Safe threading for the executable, called first in main: OpenMP and the BLAS read their environment
 * when the program loads, so when OMP_WAIT_POLICY is unset it is set to passive (idle threads sleep
 * instead of spinning: on a shared machine a spinning team costs a time slice per parallel region,
 * measured 10× slower runs on 2 cores with one busy), OPENBLAS_NUM_THREADS to 1 when unset (the BLAS
 * inside CHOLMOD would start its own spinning pool), and the program re-executes itself
 * (/proc/self/exe) once (not under valgrind). A variable the user set is kept; CT_KEEP_ENV=1 skips all of it. Returns only
 * if no re-execution happened (or it failed, then the run goes on with the libraries' defaults). */
void ct_cli_safe_threads(char **argv);

#endif
