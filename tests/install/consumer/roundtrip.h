/* SPDX-License-Identifier: MIT */
/*
 * tests/install/consumer/roundtrip.h - the one entry point of the
 * install test's consumer code.
 */
#ifndef GRB_INSTALL_ROUNDTRIP_H
#define GRB_INSTALL_ROUNDTRIP_H

/*
 * consumer_roundtrip - write records to a channel and read them back,
 * through the engine API and through the basic client.
 * @who: name to print in messages.
 * Return: 0 when every record came back intact; -1 otherwise, after
 * printing what went wrong on stderr.
 */
int consumer_roundtrip(const char *who);

#endif /* GRB_INSTALL_ROUNDTRIP_H */
