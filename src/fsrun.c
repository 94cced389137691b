/* fsrun CLI entry: global options and the subcommand table. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    printf("fsrun version %s\ncommit: %s\n", PACKAGE_VERSION, FSRUN_COMMIT);
    return 0;
  }
  fprintf(stderr, "fsrun: usage: fsrun COMMAND\n");
  return 1;
}
