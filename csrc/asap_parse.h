/* asap_parse: a plain-C parser for text edge lists (no Python.h, no MPI).
 *
 * Input: a piece of a text file made of whole lines (the last one may lack its
 * '\n').  One edge per line: columns separated by runs of blanks (space, tab, CR,
 * VT, FF) and/or commas; lines whose first non-blank byte is '#' or '%' are
 * comments; blank lines are skipped; CRLF endings and trailing blanks are fine.
 * Columns are 1-based: src_col and dst_col hold non-negative decimal integers
 * < 2^63, weight_col (0 = none) a finite decimal/scientific number.  Columns
 * beyond the last one needed are never looked at.
 *
 * Output: int64 or int32 (id32 != 0) src/dst ids and, when weight_col > 0,
 * double weights.  The first error stops the parse and is described by an
 * asap_parse_error (line relative to the piece, 1-based).
 */
#ifndef ASAP_PARSE_H
#define ASAP_PARSE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum asap_parse_code {
    ASAP_PARSE_OK = 0,
    ASAP_PARSE_BAD_ID = 1,        /* token is not a decimal integer */
    ASAP_PARSE_NEG_ID = 2,        /* '-123' */
    ASAP_PARSE_SIGNED_ID = 3,     /* '+123' */
    ASAP_PARSE_DECIMAL_ID = 4,    /* '12.0', '1e3' */
    ASAP_PARSE_ID_OVERFLOW = 5,   /* >= 2^63 */
    ASAP_PARSE_MISSING_COL = 6,   /* line has too few columns */
    ASAP_PARSE_BAD_WEIGHT = 7,    /* weight is not a number */
    ASAP_PARSE_NONFINITE = 8,     /* nan, inf, 1e999 */
    ASAP_PARSE_BINARY = 9,        /* NUL byte */
    ASAP_PARSE_NEED64 = 10,       /* id32 output requested but an id is >= 2^31 */
    ASAP_PARSE_CAPACITY = 11      /* more edges than cap (caller bug) */
};

typedef struct {
    int src_col;     /* 1-based */
    int dst_col;     /* 1-based */
    int weight_col;  /* 1-based, 0 = no weight */
} asap_parse_opts;

typedef struct {
    int code;          /* enum asap_parse_code */
    int column;        /* 1-based column the error is about */
    int ncols;         /* columns found on the line (ASAP_PARSE_MISSING_COL) */
    int64_t line;      /* 1-based line number within the piece */
    int64_t tok_off;   /* offending token: offset from the piece start ... */
    int64_t tok_len;   /* ... and length */
} asap_parse_error;

/* Parse buf[0:len) (whole lines).  Writes at most cap edges into src/dst/w
 * (w may be NULL when o->weight_col == 0).  Returns the number of edges
 * written; err->code is ASAP_PARSE_OK on success.  *max_id receives the largest
 * id written (-1 when none). */
int64_t asap_parse_piece(const char *buf, int64_t len, const asap_parse_opts *o,
                         void *src, void *dst, double *w, int64_t cap, int id32,
                         int64_t *max_id, asap_parse_error *err);

/* Number of '\n' bytes in buf[0:len). */
int64_t asap_count_newlines(const char *buf, int64_t len);

/* The same, and *nul = whether buf[0:len) holds a NUL byte (one pass for both). */
int64_t asap_count_newlines_nul(const char *buf, int64_t len, int *nul);

/* The same, and (*cr) whether a '\r' byte occurs. */
int64_t asap_count_newlines_nul_cr(const char *buf, int64_t len, int *nul, int *cr);

/* Offset of the first '\r' of buf[0:len) not followed by '\n' (a bare CR: old Mac line
 * ends, which the parser would read as a blank), -1 when none.  CRLF is fine. */
int64_t asap_first_bare_cr(const char *buf, int64_t len);

/* Parse one weight token [t, t+len): returns an asap_parse_code (OK, BAD_WEIGHT,
 * NONFINITE, BINARY). */
int asap_parse_weight(const char *t, int64_t len, double *out);

#ifdef __cplusplus
}
#endif
#endif
