/* asap_parse.c -- text edge-list parser (see asap_parse.h for the contract).
 *
 * Design: one forward pass over the bytes, no copies, no allocation.  A line is
 * scanned token by token only up to the last column the caller needs; the rest
 * of the line is skipped with memchr.  Integer ids are accumulated digit by
 * digit with an exact overflow check; weights use a fast exact path for short
 * decimals (at most 15 significant digits and 22 fractional digits: the value
 * m / 10^k is then correctly rounded, Clinger 1990) and strtod otherwise.
 * Errors never abort the process: the first one is returned with its line
 * (relative to the piece), column and token, and the caller turns it into a
 * message.  The function is reentrant (called from several OpenMP threads on
 * disjoint line-aligned pieces of one buffer).
 */
#include "asap_parse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double asap_pow10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* character classes: 0 token byte, 2 blank (separator: space, tab, CR, VT, FF,
 * comma), 3 newline.  A table lookup instead of six comparisons per byte. */
#define B2 2
static const unsigned char asap_cls[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, B2, 3, B2, B2, B2, 0, 0, /* \t \n \v \f \r */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0, 0,  0,  0,  0, 0,
    B2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, B2, 0, 0, 0,    /* space, comma */
};
#undef B2

static inline int is_blank(unsigned char c)
{
    return asap_cls[c] == 2;
}

static inline int is_tok(unsigned char c)
{
    return asap_cls[c] < 2;
}

/* '\n' bytes of buf[0:len), and (when nul != NULL) whether a NUL byte occurs: one pass of
 * 8-byte words (SWAR, exact per byte: the high bit of each byte of ~(((x & 7f..) + 7f..) | x)
 * is set iff that byte of x is zero), per-byte counters summed every 255 words.  The
 * memchr loop it replaces made one call per line (about 16 bytes on rmat:22 text) and a
 * second pass looked for NUL bytes. */
#define ASAP_LO7 0x7F7F7F7F7F7F7F7Full
#define ASAP_ONES 0x0101010101010101ull
static inline uint64_t zero_bytes(uint64_t x)
{
    return ~(((x & ASAP_LO7) + ASAP_LO7) | x | ASAP_LO7);
}

static inline int64_t lane_sum(uint64_t acc)
{
    acc = (acc & 0x00FF00FF00FF00FFull) + ((acc >> 8) & 0x00FF00FF00FF00FFull);
    return (int64_t)((acc * 0x0001000100010001ull) >> 48);
}

static inline int64_t count_nl(const char *buf, int64_t len, int *nul, int *cr,
                               const int want_cr)
{
    int64_t n = 0, i = 0;
    uint64_t anyz = 0, anycr = 0;
    while (len - i >= 8) {
        uint64_t acc = 0;
        int64_t stop = len - i >= 8 * 255 ? i + 8 * 255 : i + (len - i) / 8 * 8;
        for (; i < stop; i += 8) {
            uint64_t v;
            memcpy(&v, buf + i, 8);
            acc += zero_bytes(v ^ (ASAP_ONES * '\n')) >> 7;
            anyz |= zero_bytes(v);
            if (want_cr)
                anycr |= zero_bytes(v ^ (ASAP_ONES * '\r'));
        }
        n += lane_sum(acc);
    }
    for (; i < len; i++) {
        n += buf[i] == '\n';
        anyz |= buf[i] == 0;
        anycr |= buf[i] == '\r';
    }
    if (nul)
        *nul = anyz != 0;
    if (cr)
        *cr = anycr != 0;
    return n;
}

int64_t asap_count_newlines_nul(const char *buf, int64_t len, int *nul)
{
    return count_nl(buf, len, nul, NULL, 0);
}

int64_t asap_count_newlines_nul_cr(const char *buf, int64_t len, int *nul, int *cr)
{
    return count_nl(buf, len, nul, cr, 1);
}

int64_t asap_first_bare_cr(const char *buf, int64_t len)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *q = (const char *)memchr(p, '\r', (size_t)(end - p));
        if (q == NULL)
            return -1;
        if (q + 1 == end || q[1] != '\n')
            return (int64_t)(q - buf);
        p = q + 2;
    }
    return -1;
}

int64_t asap_count_newlines(const char *buf, int64_t len)
{
    return asap_count_newlines_nul(buf, len, NULL);
}

/* SWAR digit runs (little-endian targets with GCC/Clang builtins): the leading decimal
 * digits of the 8 bytes at p, their count L (0..8) returned and, when L > 0, their value
 * in *val.  A byte is a digit iff its high nibble is 3 and its low nibble + 6 stays below
 * 16 (no carry crosses a byte, so the test is exact per byte).  The value is the
 * eight-digit reduction of Lemire's "fast_float" / simdjson (three multiplications), the
 * bytes past the run shifted out first (they become leading zeros; borrows of the
 * subtraction of '0' only travel towards them).  Replaces up to 8 dependent
 * multiply-adds of the byte loop per id. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ASAP_SWAR 1
static const uint64_t asap_pow10u[9] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u,
                                        10000000u, 100000000u};

static inline int swar_digits8(const unsigned char *p, uint64_t *val)
{
    uint64_t v, nd, t;
    int L;
    memcpy(&v, p, 8);
    nd = ((v & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull) |
         (((v & 0x0F0F0F0F0F0F0F0Full) + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull);
    L = nd ? (__builtin_ctzll(nd) >> 3) : 8;
    if (L == 0)
        return 0;
    t = (v - 0x3030303030303030ull) << (8 * (8 - L));
    t = (t * 10u) + (t >> 8);
    t = (((t & 0x000000FF000000FFull) * 0x000F424000000064ull) +
         (((t >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
    *val = t;
    return L;
}
#else
#define ASAP_SWAR 0
#endif

static inline int parse_id(const unsigned char *t, const unsigned char *e, int64_t *out)
{
    const unsigned char *q = t;
    uint64_t v = 0;
    int overflow = 0;
    unsigned char c = *q;
    if (c == '-' || c == '+') {
        /* a sign: report it only when the rest looks like a number */
        const unsigned char *r = q + 1;
        if (r == e)
            return ASAP_PARSE_BAD_ID;
        for (; r < e; r++) {
            if (*r == 0)
                return ASAP_PARSE_BINARY;
            if ((unsigned)(*r - '0') > 9 && *r != '.')
                return ASAP_PARSE_BAD_ID;
        }
        return c == '-' ? ASAP_PARSE_NEG_ID : ASAP_PARSE_SIGNED_ID;
    }
    for (; q < e; q++) {
        unsigned d = (unsigned)(*q - '0');
        if (d > 9) {
            if (*q == 0)
                return ASAP_PARSE_BINARY;
            if ((*q == '.' || *q == 'e' || *q == 'E') && q > t) {
                /* 12.0, 1e5: a number, but not an integer */
                const unsigned char *r = q;
                for (; r < e; r++) {
                    if (*r == 0)
                        return ASAP_PARSE_BINARY;
                    if ((unsigned)(*r - '0') > 9 && *r != '.' && *r != 'e' && *r != 'E' &&
                        *r != '+' && *r != '-')
                        return ASAP_PARSE_BAD_ID;
                }
                return ASAP_PARSE_DECIMAL_ID;
            }
            return ASAP_PARSE_BAD_ID;
        }
        if (!overflow) {
            if (v > (uint64_t)(INT64_MAX - d) / 10u)
                overflow = 1;
            else
                v = v * 10u + d;
        }
    }
    if (overflow)
        return ASAP_PARSE_ID_OVERFLOW;
    *out = (int64_t)v;
    return ASAP_PARSE_OK;
}

int asap_parse_weight(const char *tc, int64_t len, double *out)
{
    const unsigned char *t = (const unsigned char *)tc, *e = t + len, *q = t;
    int neg = 0, seen_dot = 0, nd = 0, frac = 0;
    uint64_t m = 0;
    if (len <= 0)
        return ASAP_PARSE_BAD_WEIGHT;
    if (*q == '+' || *q == '-') {
        neg = (*q == '-');
        q++;
    }
    for (; q < e; q++) {
        unsigned d = (unsigned)(*q - '0');
        if (d <= 9) {
            if (nd < 19)
                m = m * 10u + d;
            nd++;
            frac += seen_dot;
        } else if (*q == '.' && !seen_dot) {
            seen_dot = 1;
        } else {
            break;
        }
    }
    if (q == e && nd > 0 && nd <= 15 && frac <= 22) {
        double v = (double)m;
        if (frac)
            v /= asap_pow10[frac];
        *out = neg ? -v : v;
        return ASAP_PARSE_OK;
    }
    /* slow path: exponents, long mantissas, nan/inf, garbage */
    {
        char tmp[128];
        char *endp;
        double v;
        int64_t i;
        for (i = 0; i < len; i++) {
            if (t[i] == 0)
                return ASAP_PARSE_BINARY;
            /* strtod reads C99 hex floats ('0x10' = 16, '0x1p4'); Python's float(),
             * numpy and networkx refuse them, and a hex id column shifted into the
             * weight's place would be read as a weight: a bad weight here too */
            if (t[i] == 'x' || t[i] == 'X')
                return ASAP_PARSE_BAD_WEIGHT;
        }
        if (len >= (int64_t)sizeof(tmp))
            return ASAP_PARSE_BAD_WEIGHT;
        /* (leading blanks never reach here: the tokenizer splits on them) */
        memcpy(tmp, t, (size_t)len);
        tmp[len] = 0;
        v = strtod(tmp, &endp);
        if (endp != tmp + len)
            return ASAP_PARSE_BAD_WEIGHT;
        if (!isfinite(v))
            return ASAP_PARSE_NONFINITE;
        *out = v;
        return ASAP_PARSE_OK;
    }
}

/* The separator just before the token at t (line start ls) is made of commas only, as in
 * a comma CSV ('1,2,0,5': the comma after '0' separates columns too).  Any other separator
 * ('1<TAB>2<TAB>0,5', '1,2<TAB>0,5', '1, 2, 0,5') makes a comma inside the weight a
 * decimal comma. */
static inline int csv_sep_before(const unsigned char *ls, const unsigned char *t)
{
    const unsigned char *q = t;
    while (q > ls && is_blank(q[-1])) {
        if (q[-1] != ',')
            return 0;
        q--;
    }
    return q < t && q > ls;
}

#define FAIL(c, col_, tk, tl)                                                        \
    do {                                                                             \
        err->code = (c);                                                             \
        err->column = (col_);                                                        \
        err->line = line;                                                            \
        err->tok_off = (int64_t)((tk) - (const unsigned char *)buf);                 \
        err->tok_len = (int64_t)(tl);                                                \
        *max_id = maxv;                                                              \
        return k;                                                                    \
    } while (0)

int64_t asap_parse_piece(const char *buf, int64_t len, const asap_parse_opts *o,
                         void *src, void *dst, double *w, int64_t cap, int id32,
                         int64_t *max_id, asap_parse_error *err)
{
    const unsigned char *p = (const unsigned char *)buf, *end = p + len;
    const int sc = o->src_col, dc = o->dst_col, wc = o->weight_col;
    int maxcol = sc > dc ? sc : dc;
    int64_t k = 0, line = 0, maxv = -1;
    int64_t *src64 = (int64_t *)src, *dst64 = (int64_t *)dst;
    int32_t *src32 = (int32_t *)src, *dst32 = (int32_t *)dst;
    if (wc > maxcol)
        maxcol = wc;
    err->code = ASAP_PARSE_OK;
    err->column = 0;
    err->ncols = 0;
    err->line = 0;
    err->tok_off = 0;
    err->tok_len = 0;

    while (p < end) {
        int col;
        int64_t sv = 0, dv = 0;
        double wv = 1.0;
        const unsigned char *ls = p;
        line++;
        while (p < end && is_blank(*p))
            p++;
        if (p == end)
            break;
        if (*p == '\n') {
            p++;
            continue;
        }
        if (*p == '#' || *p == '%') {
            const unsigned char *q = (const unsigned char *)memchr(p, '\n', (size_t)(end - p));
            p = q ? q + 1 : end;
            continue;
        }
        if (k >= cap)
            FAIL(ASAP_PARSE_CAPACITY, 0, p, 0);
        col = 1;
        for (;;) {
            const unsigned char *t = p;
            int rc;
            if (col == sc || col == dc) {
                /* fast path: up to 18 digits followed by a blank/newline/end */
                uint64_t x = 0;
                int64_t v;
                unsigned d;
#if ASAP_SWAR
                if (end - p >= 16) {
                    uint64_t a = 0, b = 0;
                    int L = swar_digits8(p, &a);
                    x = a;
                    p += L;
                    if (L == 8) {
                        L = swar_digits8(p, &b);
                        x = x * asap_pow10u[L] + b;
                        p += L;
                    }
                }
#endif
                while (p < end && (d = (unsigned)(*p - '0')) <= 9) {
                    x = x * 10u + d;
                    p++;
                }
                if (p > t && p - t <= 18 && (p == end || !is_tok(*p))) {
                    v = (int64_t)x;
                } else {
                    p = t;
                    while (p < end && is_tok(*p))
                        p++;
                    rc = parse_id(t, p, &v);
                    if (rc != ASAP_PARSE_OK)
                        FAIL(rc, col, t, p - t);
                }
                if (col == sc)
                    sv = v;
                if (col == dc)
                    dv = v;
            } else if (col == wc) {
                while (p < end && is_tok(*p))
                    p++;
                rc = asap_parse_weight((const char *)t, (int64_t)(p - t), &wv);
                if (rc != ASAP_PARSE_OK)
                    FAIL(rc, col, t, p - t);
                if (p + 1 < end && *p == ',' && (unsigned)(p[1] - '0') <= 9 && p > t &&
                    (unsigned)(p[-1] - '0') <= 9 && !csv_sep_before(ls, t)) {
                    /* '1<TAB>2<TAB>0,5', '1,2<TAB>0,5': a decimal comma (the weight's
                     * column is not separated by a comma, so this comma is not a
                     * separator); read as 0 it was a wrong answer.  The token named is
                     * '0,5'. */
                    const unsigned char *q = p + 1;
                    while (q < end && is_tok(*q))
                        q++;
                    FAIL(ASAP_PARSE_BAD_WEIGHT, col, t, q - t);
                }
            } else {
                while (p < end && is_tok(*p))
                    p++;
            }
            if (col == maxcol)
                break;
            while (p < end && is_blank(*p))
                p++;
            if (p == end || *p == '\n') {
                /* the first needed column that is missing */
                int miss = maxcol;
                if (sc > col && sc < miss)
                    miss = sc;
                if (dc > col && dc < miss)
                    miss = dc;
                if (wc > col && wc < miss)
                    miss = wc;
                err->ncols = col;
                FAIL(ASAP_PARSE_MISSING_COL, miss, p, 0);
            }
            col++;
        }
        if (id32) {
            if ((sv | dv) > INT32_MAX) {
                FAIL(ASAP_PARSE_NEED64, 0, p, 0);
            }
            src32[k] = (int32_t)sv;
            dst32[k] = (int32_t)dv;
        } else {
            src64[k] = sv;
            dst64[k] = dv;
        }
        if (sv > maxv)
            maxv = sv;
        if (dv > maxv)
            maxv = dv;
        if (wc > 0)
            w[k] = wv;
        k++;
        if (p < end && *p != '\n') {
            const unsigned char *q = (const unsigned char *)memchr(p, '\n', (size_t)(end - p));
            p = q ? q + 1 : end;
        } else if (p < end) {
            p++;
        }
    }
    *max_id = maxv;
    return k;
}
