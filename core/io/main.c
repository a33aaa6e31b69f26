/* main.c — the contactlab executable. */
#include "contactlab/ct_cli.h"
#include "contactlab/ct_sim.h"

int main(int argc, char **argv)
{
    ct_cli_safe_threads(argv); /* may re-execute the program (see ct_cli.h) */
    ct_tune_allocator();       /* see ct_sim.h */
    return ct_cli_main(argc, argv);
}
