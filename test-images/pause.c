/* The only program of the `noshell` test image: idles like Kubernetes' pause container,
 * exits 0 on SIGTERM/SIGINT, and reaps children. Built static, so the image has no shell,
 * no libc and no coreutils. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) { (void)sig; _exit(0); }

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    puts("pause 1.0 (container-isolation test image)");
    return 0;
  }
  struct sigaction stop = {0}, child = {0};
  stop.sa_handler = on_stop;
  child.sa_handler = on_child;
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGINT, &stop, NULL);
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
}
