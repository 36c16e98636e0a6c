/*
 * cmd.h — subcommand entry points; each wires options to library calls.
 */
#ifndef KPROF_CMD_H
#define KPROF_CMD_H

/* Each returns an exit status from enum kp_status (diag.h). argv[0] is the command name. */
int cmd_analyze(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_augment(int argc, char **argv);
int cmd_merge(int argc, char **argv);

#endif /* KPROF_CMD_H */
