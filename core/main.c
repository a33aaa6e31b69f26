/* main.c — the contactlab command line (placeholder until cli.c lands). */
#include <stdio.h>
int main(void) { puts("contactlab"); return 0; }
