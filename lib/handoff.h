/* SPDX-License-Identifier: MIT */
/*
 * Who will serve an accepted connection (see handoff.c).
 */
#ifndef FDR_HANDOFF_H
#define FDR_HANDOFF_H

#include "state.h"

/* Chunks the learning pool may take (one fd per line: 8 fds a chunk). */
#define FDR_SPARSE_CHUNKS 8u

/* In fdr_place, for an accepted fd: the owner to place it with. */
unsigned fdr_handoff_owner(void) FDR_HIDDEN;
/* The accept wrapper returns @fd: note it as awaiting its serving thread. */
void fdr_handoff_accepted(int fd) FDR_HIDDEN;
/* epoll_ctl(EPOLL_CTL_ADD) of @fd succeeded on this thread. */
void fdr_handoff_registered(int fd) FDR_HIDDEN;
/* Start-up: the rotation of an explicit roundrobin. */
void fdr_handoff_init(void) FDR_HIDDEN;
/* Inside fork, in the child (memory only): nothing learned yet. */
void fdr_handoff_atfork_child(void) FDR_HIDDEN;
/* The child's own block is made: its model starts afresh. */
void fdr_handoff_child_fixup(void) FDR_HIDDEN;
/* A call other than accept made @fd: an accept's pending record for the
 * number is stale (that connection was closed unregistered). */
void fdr_handoff_created(int fd) FDR_HIDDEN;

#endif
