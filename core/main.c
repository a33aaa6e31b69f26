/* main.c — the contactlab executable. */
#include "contactlab/ct_cli.h"

int main(int argc, char **argv) { return ct_cli_main(argc, argv); }
