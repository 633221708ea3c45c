/* The near-duplicate fingerprint's kernels (gatherer/simhash.py says what they compute and why).
 *
 * word_hashes(data) -> bytes      a 64-bit hash per word of UTF-8 ``data``, uint64 little-endian, in order
 * shingles(text, minimum, maximum) -> bytes
 *                                 the distinct shingle hashes of a str (of its UTF-8 bytes, lone surrogates
 *                                 as "surrogatepass" writes them), in the order they first come; of more than
 *                                 ``maximum``, the ``maximum`` smallest, sorted; empty when fewer than
 *                                 ``minimum``
 * simhash(hashes, weights) -> int or None
 *                                 bit i set when the shingles with bit i set outweigh the others; ``weights``
 *                                 int32 per hash, or None for all 1; None when no shingle has weight
 * sketch_count(sketch, hashes[, template]) -> None; given template, int or None
 *                                 count a page's hashes in its site's count-min sketch (uint8, two rows), a
 *                                 counter the page's hashes share once; given template, return the page's
 *                                 template_simhash after the count, made in the same pass
 * template_simhash(hashes, sketch, template) -> int or None
 *                                 the SimHash of the hashes the sketch saw on fewer than ``template`` pages
 *
 * A word is a run of ASCII letters and digits and of bytes 0x80 and up, ASCII letters lower-cased; its hash
 * is the sum of each byte times a power of FNV's prime (the power of its place in the word, the places past
 * MAX_WORD_BYTES sharing the last one), mixed by splitmix64's finaliser. A shingle is SHINGLE_WORDS words in
 * a row: the sum of their hashes times a multiplier per place, mixed again. Sums and products wrap at 64
 * bits. The page's text is bounded by the fetch's size limit, and the time is linear in it.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SHINGLE_WORDS 4
#define MAX_WORD_BITS 5
#define MAX_WORD_BYTES (1 << MAX_WORD_BITS)

_Static_assert(SHINGLE_WORDS == 4, "shingles() combines four words a shingle");

static const uint64_t BYTE_MULTIPLIER = 0x100000001B3ULL;
static const uint64_t SHINGLE_MULTIPLIERS[SHINGLE_WORDS] = {
    0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL, 0x165667B19E3779F9ULL, 0x27D4EB2F165667C5ULL};
static uint64_t powers[MAX_WORD_BYTES + 1]; /* a byte's at each place in a word; the last two are one */

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* Each byte as it counts in a word: ASCII letters lower-cased, digits and bytes 0x80 and up as they are;
 * 0 for a byte between words. */
static unsigned char fold[256];

/* One byte of the text: its word's sum so far stored at out[n], which a separator after a word keeps by moving
 * n on. No branch depends on the byte: one at a word's end would be mispredicted at almost every word, and
 * cost more than the rest of the loop. ``place`` stops at MAX_WORD_BYTES (the shift is 1 there only),
 * whose power is the last one's. */
#define WORD_BYTE(byte)                                                                                        \
    do {                                                                                                       \
        uint64_t c_ = fold[(byte)];                                                                            \
        uint64_t word_ = -(uint64_t)(c_ != 0);                                                                 \
        out[n] = sum;                                                                                          \
        n += (Py_ssize_t)(in_word & ~word_ & 1);                                                               \
        in_word = word_;                                                                                       \
        sum = (sum & word_) + c_ * powers[place];                                                              \
        place = (place + 1 - (place >> MAX_WORD_BITS)) & word_;                                                \
    } while (0)

/* The words' unmixed sums of UTF-8 data into out (room for len / 2 + 1 words: a word and a separator take two
 * bytes, but the last); returns their number. */
static Py_ssize_t sum_words(const unsigned char *data, Py_ssize_t len, uint64_t *out) {
    Py_ssize_t n = 0;
    uint64_t sum = 0, in_word = 0, place = 0;
#pragma GCC unroll 4
    for (Py_ssize_t i = 0; i < len; i++)
        WORD_BYTE(data[i]);
    if (in_word)
        out[n++] = sum;
    return n;
}

/* The same of a str's code points, each as the bytes UTF-8 writes for it (a lone surrogate as
 * "surrogatepass" writes it), without a copy of the text in UTF-8: room for len / 2 + 1 words, len the
 * code points (a word and a separator take two, but the last). A code point under 0x80 is one byte, the
 * branch taken alike for runs of text in one script. */
#define SUM_CODE_POINTS(name, type)                                                                            \
    static Py_ssize_t name(const type *data, Py_ssize_t len, uint64_t *out) {                                  \
        Py_ssize_t n = 0;                                                                                      \
        uint64_t sum = 0, in_word = 0, place = 0;                                                              \
        for (Py_ssize_t i = 0; i < len; i++) {                                                                 \
            Py_UCS4 u = data[i];                                                                               \
            if (u < 0x80) {                                                                                    \
                WORD_BYTE(u);                                                                                  \
            } else if (u < 0x800) {                                                                            \
                WORD_BYTE(0xC0 | u >> 6);                                                                      \
                WORD_BYTE(0x80 | (u & 0x3F));                                                                  \
            } else if (u < 0x10000) {                                                                          \
                WORD_BYTE(0xE0 | u >> 12);                                                                     \
                WORD_BYTE(0x80 | (u >> 6 & 0x3F));                                                             \
                WORD_BYTE(0x80 | (u & 0x3F));                                                                  \
            } else {                                                                                           \
                WORD_BYTE(0xF0 | u >> 18);                                                                     \
                WORD_BYTE(0x80 | (u >> 12 & 0x3F));                                                            \
                WORD_BYTE(0x80 | (u >> 6 & 0x3F));                                                             \
                WORD_BYTE(0x80 | (u & 0x3F));                                                                  \
            }                                                                                                  \
        }                                                                                                      \
        if (in_word)                                                                                           \
            out[n++] = sum;                                                                                    \
        return n;                                                                                              \
    }

SUM_CODE_POINTS(sum_words_ucs1, Py_UCS1)
SUM_CODE_POINTS(sum_words_ucs2, Py_UCS2)
SUM_CODE_POINTS(sum_words_ucs4, Py_UCS4)

/* The words' unmixed sums of a str into out (room for its length / 2 + 1 words); returns their number. An
 * ASCII str's bytes are its UTF-8. */
static Py_ssize_t sum_text_words(PyObject *text, uint64_t *out) {
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_IS_ASCII(text))
        return sum_words(data, len, out);
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        return sum_words_ucs1(data, len, out);
    case PyUnicode_2BYTE_KIND:
        return sum_words_ucs2(data, len, out);
    default:
        return sum_words_ucs4(data, len, out);
    }
}

static int compare_values(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts values, all under bound, into out: uniform values spread over about one bucket each by their high
 * bits (a counting sort), then each bucket by insertion, a value or two; a bucket of many (a page made to
 * fill one) by qsort, so that the time stays n log n at worst. Returns 0, or -1 out of memory. */
static int bucket_sort(const uint64_t *values, Py_ssize_t n, double bound, uint64_t *out) {
    size_t buckets = 16;
    while (buckets < (size_t)n)
        buckets *= 2;
    int shift = 0; /* the least with every value's bucket, value >> shift, under buckets */
    while (ldexp((double)buckets, shift) < bound)
        shift++;
    Py_ssize_t *ends = calloc(buckets + 1, sizeof(Py_ssize_t));
    if (ends == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        ends[(values[i] >> shift) + 1]++;
    for (size_t b = 0; b < buckets; b++)
        ends[b + 1] += ends[b];
    for (Py_ssize_t i = 0; i < n; i++)
        out[ends[values[i] >> shift]++] = values[i]; /* ends[b] moves from bucket b's start to its end */
    Py_ssize_t start = 0;
    for (size_t b = 0; b < buckets; b++) {
        Py_ssize_t end = ends[b];
        if (end - start > 16)
            qsort(out + start, (size_t)(end - start), sizeof(uint64_t), compare_values);
        else
            for (Py_ssize_t i = start + 1; i < end; i++) {
                uint64_t value = out[i];
                Py_ssize_t j = i;
                for (; j > start && out[j - 1] > value; j--)
                    out[j] = out[j - 1];
                out[j] = value;
            }
        start = end;
    }
    free(ends);
    return 0;
}

static PyObject *word_hashes(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "y*", &data))
        return NULL;
    uint64_t *words = malloc(sizeof(uint64_t) * (size_t)(data.len / 2 + 1));
    PyObject *result = NULL;
    if (words == NULL)
        PyErr_NoMemory();
    else {
        Py_ssize_t n = sum_words(data.buf, data.len, words);
        for (Py_ssize_t j = 0; j < n; j++)
            words[j] = mix(words[j]);
        result = PyBytes_FromStringAndSize((const char *)words, (Py_ssize_t)sizeof(uint64_t) * n);
    }
    free(words);
    PyBuffer_Release(&data);
    return result;
}

/* The distinct values of hashes[0:count], in the order they first come, moved to its front; returns their
 * number. An open-addressing set: the hashes are mixed already, so their low bits are the slot. */
static Py_ssize_t distinct_in_order(uint64_t *hashes, Py_ssize_t count) {
    size_t slots = 16;
    while (slots < 4 * (size_t)count)
        slots *= 2;
    uint64_t *set = malloc(sizeof(uint64_t) * slots);
    unsigned char *used = calloc(slots, 1);
    Py_ssize_t distinct = -1;
    if (set == NULL || used == NULL)
        goto done;
    distinct = 0;
    for (Py_ssize_t j = 0; j < count; j++) {
        uint64_t value = hashes[j];
        size_t slot = (size_t)value & (slots - 1);
        while (used[slot] && set[slot] != value)
            slot = (slot + 1) & (slots - 1);
        if (!used[slot]) {
            used[slot] = 1;
            set[slot] = value;
            hashes[distinct++] = value;
        }
    }
done:
    free(set);
    free(used);
    return distinct;
}

/* The maximum smallest distinct values of hashes[0:count], sorted, moved to its front; returns their number.
 * The hashes are uniform, so only those under a bound a little above the expected maximum-th smallest are
 * sorted; a bound that leaves too few is doubled. */
static Py_ssize_t distinct_smallest(uint64_t *hashes, Py_ssize_t count, Py_ssize_t maximum) {
    uint64_t *below_bound = malloc(sizeof(uint64_t) * (size_t)count);
    uint64_t *sorted = malloc(sizeof(uint64_t) * (size_t)count);
    Py_ssize_t distinct = -1;
    if (below_bound == NULL || sorted == NULL)
        goto done;
    double bound = ldexp((double)maximum * 1.25 / (double)count, 64);
    for (;;) {
        if (bound > 18446744073709551616.0)
            bound = 18446744073709551616.0;
        /* Without a branch a value: which are under the bound is as good as random. */
        int all = bound >= 18446744073709551616.0;
        uint64_t limit = all ? UINT64_MAX : bound > 0 ? (uint64_t)bound : 0;
        Py_ssize_t below = 0;
        for (Py_ssize_t j = 0; j < count; j++) {
            below_bound[below] = hashes[j];
            below += all | (hashes[j] < limit);
        }
        if (bucket_sort(below_bound, below, bound, sorted) < 0) {
            distinct = -1;
            goto done;
        }
        distinct = 0;
        for (Py_ssize_t j = 0; j < below && distinct < maximum; j++)
            if (distinct == 0 || sorted[j] != sorted[distinct - 1])
                sorted[distinct++] = sorted[j];
        if (distinct >= maximum || bound >= 18446744073709551616.0)
            break;
        bound *= 2;
    }
    memcpy(hashes, sorted, sizeof(uint64_t) * (size_t)distinct);
done:
    free(below_bound);
    free(sorted);
    return distinct;
}

static PyObject *shingles(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *text;
    Py_ssize_t minimum, maximum;
    if (!PyArg_ParseTuple(args, "Unn", &text, &minimum, &maximum))
        return NULL;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) /* a str of the legacy C API: its code points made */
        return NULL;
#endif
    PyObject *result = NULL;
    /* One array: the words' sums, then their shingles' hashes in place (shingle j is written over word j,
     * which it has read, before shingle j + 1 reads words j + 1 on). */
    uint64_t *hashes = malloc(sizeof(uint64_t) * (size_t)(PyUnicode_GET_LENGTH(text) / 2 + 1));
    if (hashes == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = sum_text_words(text, hashes), distinct = 0;
    Py_ssize_t count = n >= SHINGLE_WORDS ? n - SHINGLE_WORDS + 1 : 0;
    if (count > 0) {
        uint64_t w0 = mix(hashes[0]), w1 = mix(hashes[1]), w2 = mix(hashes[2]);
        for (Py_ssize_t j = 0; j < count; j++) {
            uint64_t w3 = mix(hashes[j + 3]);
            hashes[j] = mix(w0 * SHINGLE_MULTIPLIERS[0] + w1 * SHINGLE_MULTIPLIERS[1] +
                            w2 * SHINGLE_MULTIPLIERS[2] + w3 * SHINGLE_MULTIPLIERS[3]);
            w0 = w1;
            w1 = w2;
            w2 = w3;
        }
    }
    /* A long page: its smallest distinct hashes, a sample its copies draw alike, sorted. Else all of them. */
    distinct = count > maximum ? distinct_smallest(hashes, count, maximum) : distinct_in_order(hashes, count);
    if (distinct < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (distinct < minimum)
        distinct = 0;
    result = PyBytes_FromStringAndSize((const char *)hashes, (Py_ssize_t)sizeof(uint64_t) * distinct);
done:
    free(hashes);
    return result;
}

/* Each bit's count of set bits over values: eight one-byte counters in each of eight words, lanes[k] counting
 * bit k of each of a value's eight bytes (a shift, a mask and an add a word a value, no memory touched),
 * added to votes[8 * byte + k] before a counter can overflow. */
static void tally(const unsigned char *values, Py_ssize_t n, int64_t votes[64]) {
    const uint64_t ones = 0x0101010101010101ULL;
    for (Py_ssize_t start = 0; start < n; start += 255) {
        Py_ssize_t end = n - start > 255 ? start + 255 : n;
        uint64_t l0 = 0, l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0, l6 = 0, l7 = 0;
        for (Py_ssize_t i = start; i < end; i++) {
            uint64_t v;
            memcpy(&v, values + 8 * i, 8);
            l0 += v & ones;
            l1 += (v >> 1) & ones;
            l2 += (v >> 2) & ones;
            l3 += (v >> 3) & ones;
            l4 += (v >> 4) & ones;
            l5 += (v >> 5) & ones;
            l6 += (v >> 6) & ones;
            l7 += (v >> 7) & ones;
        }
        uint64_t lanes[8] = {l0, l1, l2, l3, l4, l5, l6, l7};
        for (int k = 0; k < 8; k++)
            for (int byte = 0; byte < 8; byte++)
                votes[8 * byte + k] += (int64_t)((lanes[k] >> (8 * byte)) & 0xFF);
    }
}

/* The fingerprint the votes elect: bit i set when the weight with it set is over half the total. */
static PyObject *majority(const int64_t votes[64], int64_t total) {
    if (total == 0)
        Py_RETURN_NONE;
    uint64_t fingerprint = 0;
    for (int bit = 0; bit < 64; bit++)
        if (2 * votes[bit] > total)
            fingerprint |= 1ULL << bit;
    return PyLong_FromUnsignedLongLong(fingerprint);
}

/* The SimHash of n uint64 values, each of weight 1. */
static PyObject *unweighted_simhash(const unsigned char *values, Py_ssize_t n) {
    int64_t votes[64] = {0};
    tally(values, n, votes);
    return majority(votes, n);
}

/* The SimHash of weighted values: each byte value's weight at each of the 8 byte places, then each bit's
 * from those (2,048 counters instead of 64 a value). */
static PyObject *weighted_simhash(const unsigned char *values, const int32_t *weights, Py_ssize_t n) {
    int64_t counts[8][256];
    memset(counts, 0, sizeof counts);
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t weight = weights[i];
        if (weight == 0)
            continue;
        total += weight;
        uint64_t value;
        memcpy(&value, values + 8 * i, 8);
        for (int place = 0; place < 8; place++)
            counts[place][(value >> (8 * place)) & 0xFF] += weight;
    }
    int64_t votes[64] = {0};
    for (int place = 0; place < 8; place++)
        for (int value = 0; value < 256; value++) {
            int64_t count = counts[place][value];
            if (count == 0)
                continue;
            for (int bit = 0; bit < 8; bit++)
                votes[8 * place + bit] += count & -(int64_t)(value >> bit & 1);
        }
    return majority(votes, total);
}

/* A sketch is two rows of one-byte counters, a power of two each; a hash counts at its low bits in the
 * first and at its bits from 32 on in the second. */
static int sketch_rows(Py_buffer *sketch, Py_buffer *hashes, Py_ssize_t *row) {
    *row = sketch->len / 2;
    if (*row < 1 || (*row & (*row - 1)) != 0 || *row > ((Py_ssize_t)1 << 32) || hashes->len % 8 != 0) {
        PyErr_SetString(PyExc_ValueError, "sketch: two rows of a power of two counters, uint64 hashes expected");
        return -1;
    }
    return 0;
}

/* The counts under ``template`` (a count c is under it when c < template): 0 to 256. */
static int under(double template) {
    return template <= 0 ? 0 : template >= 256 ? 256 : (int)ceil(template);
}

/* Count the hashes in the sketch (``count``), each counter once, and (``template`` >= 0) copy to kept those
 * the sketch has seen fewer than template times, counting this page; returns how many were kept. A counter
 * has this page's count from the first of its hashes to reach it on, so one pass does both. No branch
 * depends on a hash: whether a counter was seen, or a shingle is the template's, is as good as random. */
static Py_ssize_t sketch_pass(unsigned char *counters, Py_ssize_t row, const unsigned char *bytes,
                              Py_ssize_t n, unsigned char *seen, int limit, uint64_t *kept) {
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t value;
        memcpy(&value, bytes + 8 * i, 8);
        Py_ssize_t first = (Py_ssize_t)(value & (uint64_t)(row - 1));
        Py_ssize_t second = row + (Py_ssize_t)((value >> 32) & (uint64_t)(row - 1));
        if (seen != NULL) {
            unsigned char bit = (unsigned char)(1 << (first & 7));
            counters[first] += !(seen[first >> 3] & bit);
            seen[first >> 3] |= bit;
            bit = (unsigned char)(1 << (second & 7));
            counters[second] += !(seen[second >> 3] & bit);
            seen[second >> 3] |= bit;
        }
        if (kept != NULL) {
            unsigned char a = counters[first], b = counters[second];
            kept[k] = value;
            k += (a < b ? a : b) < limit;
        }
    }
    return k;
}

/* sketch_count(sketch, hashes[, template]): with template, the page's template SimHash too, after counting
 * (template_simhash's, in the same pass). */
static PyObject *sketch_count(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer sketch, hashes;
    double template = -1;
    if (!PyArg_ParseTuple(args, "w*y*|d", &sketch, &hashes, &template))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t row;
    unsigned char *seen = NULL;
    uint64_t *kept = NULL;
    if (sketch_rows(&sketch, &hashes, &row) < 0)
        goto done;
    /* A counter that two of the page's shingles share counts the page once: a bit a counter. */
    seen = calloc((size_t)sketch.len / 8 + 1, 1);
    kept = template >= 0 ? malloc((size_t)hashes.len + 8) : NULL;
    if (seen == NULL || (template >= 0 && kept == NULL)) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t k = sketch_pass(sketch.buf, row, hashes.buf, hashes.len / 8, seen, under(template), kept);
    result = kept != NULL ? unweighted_simhash((const unsigned char *)kept, k) : Py_NewRef(Py_None);
done:
    free(seen);
    free(kept);
    PyBuffer_Release(&sketch);
    PyBuffer_Release(&hashes);
    return result;
}

static PyObject *template_simhash(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer hashes, sketch;
    double template;
    if (!PyArg_ParseTuple(args, "y*y*d", &hashes, &sketch, &template))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t row;
    uint64_t *kept = NULL;
    if (sketch_rows(&sketch, &hashes, &row) < 0)
        goto done;
    kept = malloc((size_t)hashes.len + 8);
    if (kept == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t k = sketch_pass((unsigned char *)sketch.buf, row, hashes.buf, hashes.len / 8, NULL,
                               under(template), kept);
    result = unweighted_simhash((const unsigned char *)kept, k);
done:
    free(kept);
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&sketch);
    return result;
}

static PyObject *simhash(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer hashes, weights = {0};
    PyObject *weights_object;
    if (!PyArg_ParseTuple(args, "y*O", &hashes, &weights_object))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = hashes.len / 8;
    if (weights_object != Py_None) {
        if (PyObject_GetBuffer(weights_object, &weights, PyBUF_SIMPLE) < 0)
            goto done;
        if (weights.len != n * 4) {
            PyErr_SetString(PyExc_ValueError, "simhash: one int32 weight a hash expected");
            goto done;
        }
    }
    if (hashes.len % 8 != 0) {
        PyErr_SetString(PyExc_ValueError, "simhash: uint64 hashes expected");
        goto done;
    }
    result = weights.buf != NULL ? weighted_simhash(hashes.buf, weights.buf, n)
                                 : unweighted_simhash(hashes.buf, n);
done:
    if (weights.obj != NULL)
        PyBuffer_Release(&weights);
    PyBuffer_Release(&hashes);
    return result;
}

static PyMethodDef methods[] = {
    {"word_hashes", word_hashes, METH_VARARGS, "A 64-bit hash per word of UTF-8 text."},
    {"shingles", shingles, METH_VARARGS, "The distinct shingle hashes of a text, at most maximum."},
    {"simhash", simhash, METH_VARARGS, "The weighted majority of each bit of the hashes; None if no weight."},
    {"sketch_count", sketch_count, METH_VARARGS,
     "Count a page's hashes in a site's sketch, each counter once; given template, its template_simhash."},
    {"template_simhash", template_simhash, METH_VARARGS,
     "The SimHash of the hashes the sketch has seen fewer than template times; None if none."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_simhash", "The near-duplicate fingerprint's kernels (see _simhash.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__simhash(void) {
    uint64_t power = 1;
    for (int c = 0; c < 256; c++)
        fold[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c >= 0x80 ? c
                  : (c >= 'A' && c <= 'Z')                                    ? c + ('a' - 'A')
                                                                               : 0;
    for (int place = 0; place < MAX_WORD_BYTES; place++)
        powers[place] = power *= BYTE_MULTIPLIER;
    powers[MAX_WORD_BYTES] = powers[MAX_WORD_BYTES - 1];
    return PyModule_Create(&module);
}
