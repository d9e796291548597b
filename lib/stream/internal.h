/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the stream module's files share and nothing else sees.
 */
#ifndef EV_STREAM_INTERNAL_H
#define EV_STREAM_INTERNAL_H

#include <sys/types.h>

/* Is (dev, ino) the file that an open ev_output will replace? */
int ev_output_replaces(dev_t dev, ino_t ino);

#endif
