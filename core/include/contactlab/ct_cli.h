/* ct_cli.h — the contactlab command line (DESIGN §7). Exit status: 0 ok, 1 run failed,
 * 2 bad input.
 * layer: io */
#ifndef CT_CLI_H
#define CT_CLI_H

int ct_cli_main(int argc, char **argv);

#endif
