/* SPDX-License-Identifier: MIT */
#ifndef FDRANGE_TOOLS_STAT_H
#define FDRANGE_TOOLS_STAT_H

/* `fdrange stat ...`: argv[0] is "stat".  Returns the exit status. */
int fdrange_stat_main(int argc, char **argv);

#endif
