/*
 * The crashes a run has stored, by id, and how often each was seen: under
 * --keep-going one bug is found again and again, and a person wants one
 * line when it is new, a count in the status line, and one line per id in
 * the summary, never one line per sighting.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct CrashTally CrashTally;

/* 0 or -ENOMEM. */
int crashtally_new(CrashTally **ret);
/* NULL is a no-op. */
void crashtally_free(CrashTally *t);

/* Counts one sighting of crash @id (with its kind and message, kept from
 * the first). Returns 1 when @id is new to this run, 0 when it was seen
 * before, or -ENOMEM (the sighting is not counted). */
int crashtally_add(CrashTally *t, const char *id, const char *kind, const char *message);

/* Distinct ids, and sightings of all of them. */
size_t crashtally_unique(const CrashTally *t);
uint64_t crashtally_sightings(const CrashTally *t);

/* One line per id, the most seen first (at most CRASHTALLY_SUMMARY_MAX,
 * then one line for the rest): "crash ID: KIND (MESSAGE), seen N times".
 * Nothing when no id was seen more than once (the lines said it all). */
#define CRASHTALLY_SUMMARY_MAX 20
void crashtally_summary(const CrashTally *t);
