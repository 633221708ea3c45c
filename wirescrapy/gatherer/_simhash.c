/* The near-duplicate fingerprint's kernels (gatherer/simhash.py says what they compute and why).
 *
 * word_hashes(data) -> bytes      a 64-bit hash per word of UTF-8 ``data``, uint64 little-endian, in order
 * shingles(text, minimum, maximum) -> bytes
 *                                 the distinct shingle hashes of a str (its UTF-8 bytes, lone surrogates
 *                                 as "surrogatepass" writes them), in the order they first come; of more than
 *                                 ``maximum``, the ``maximum`` smallest, sorted; empty when fewer than
 *                                 ``minimum``
 * simhash(hashes, weights) -> int or None
 *                                 bit i set when the shingles with bit i set outweigh the others; ``weights``
 *                                 int32 per hash, or None for all 1; None when no shingle has weight
 * sketch_count(sketch, hashes)    count a page's hashes in its site's count-min sketch (uint8, two rows), a
 *                                 counter the page's hashes share once
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
#define MAX_WORD_BYTES 32

static const uint64_t BYTE_MULTIPLIER = 0x100000001B3ULL;
static const uint64_t SHINGLE_MULTIPLIERS[SHINGLE_WORDS] = {
    0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL, 0x165667B19E3779F9ULL, 0x27D4EB2F165667C5ULL};
static uint64_t powers[MAX_WORD_BYTES];

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

/* The words' hashes of data into out (room for len / 2 + 1 words: a word and a separator take two bytes,
 * but the last); returns their number. */
static Py_ssize_t hash_words(const unsigned char *data, Py_ssize_t len, uint64_t *out) {
    Py_ssize_t n = 0;
    Py_ssize_t i = 0;
    while (i < len) {
        if (!fold[data[i]]) {
            i++;
            continue;
        }
        uint64_t h = 0;
        int place = 0;
        unsigned char c;
        for (; i < len && (c = fold[data[i]]) != 0; i++) {
            h += (uint64_t)c * powers[place];
            place += place < MAX_WORD_BYTES - 1;
        }
        out[n++] = mix(h);
    }
    return n;
}

/* Sorts values in place, least significant byte first (tmp: room for n). */
static void radix_sort(uint64_t *values, uint64_t *tmp, Py_ssize_t n) {
    Py_ssize_t counts[256];
    for (int shift = 0; shift < 64; shift += 8) {
        memset(counts, 0, sizeof counts);
        for (Py_ssize_t i = 0; i < n; i++)
            counts[(values[i] >> shift) & 0xFF]++;
        Py_ssize_t total = 0;
        for (int b = 0; b < 256; b++) {
            Py_ssize_t c = counts[b];
            counts[b] = total;
            total += c;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            tmp[counts[(values[i] >> shift) & 0xFF]++] = values[i];
        uint64_t *swap = values;
        values = tmp;
        tmp = swap;
    }
    /* eight passes: the sorted values are back in the caller's array */
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
    else
        result = PyBytes_FromStringAndSize((const char *)words,
                                           (Py_ssize_t)sizeof(uint64_t) * hash_words(data.buf, data.len, words));
    free(words);
    PyBuffer_Release(&data);
    return result;
}

/* The UTF-8 bytes of a str (lone surrogates as they are, as "surrogatepass" writes them): Python's own
 * copy, without one more, when it has one (an ASCII str always has). */
static int utf8_of(PyObject *text, Py_buffer *data, PyObject **encoded) {
    *encoded = NULL;
    Py_ssize_t len;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &len);
    if (utf8 == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
            return -1;
        PyErr_Clear();
        *encoded = PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
        if (*encoded == NULL)
            return -1;
        utf8 = PyBytes_AS_STRING(*encoded);
        len = PyBytes_GET_SIZE(*encoded);
    }
    return PyBuffer_FillInfo(data, NULL, (void *)utf8, len, 1, PyBUF_SIMPLE);
}

static PyObject *shingles(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    PyObject *text, *encoded;
    Py_ssize_t minimum, maximum;
    if (!PyArg_ParseTuple(args, "Unn", &text, &minimum, &maximum) || utf8_of(text, &data, &encoded) < 0)
        return NULL;
    PyObject *result = NULL;
    size_t room = (size_t)(data.len / 2 + 1);
    uint64_t *words = malloc(sizeof(uint64_t) * room), *hashes = malloc(sizeof(uint64_t) * room),
             *tmp = malloc(sizeof(uint64_t) * room), *set = NULL;
    unsigned char *used = NULL;
    if (words == NULL || hashes == NULL || tmp == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = hash_words(data.buf, data.len, words), distinct = 0;
    Py_ssize_t count = n >= SHINGLE_WORDS ? n - SHINGLE_WORDS + 1 : 0;
    for (Py_ssize_t j = 0; j < count; j++) {
        uint64_t combined = 0;
        for (int i = 0; i < SHINGLE_WORDS; i++)
            combined += words[j + i] * SHINGLE_MULTIPLIERS[i];
        hashes[j] = mix(combined);
    }
    if (count > maximum) {
        /* A long page: its smallest distinct hashes, a sample its copies draw alike, sorted. The hashes are
         * uniform, so only those under a bound a little above the expected maximum-th smallest are sorted;
         * a bound that leaves too few is doubled. */
        double bound = ldexp((double)maximum * 1.25 / (double)count, 64);
        for (;;) {
            Py_ssize_t below = 0;
            for (Py_ssize_t j = 0; j < count; j++)
                if (bound >= 18446744073709551616.0 || (double)hashes[j] < bound)
                    tmp[below++] = hashes[j];
            radix_sort(tmp, words, below); /* the words' hashes are spent: their room is the sort's */
            distinct = 0;
            for (Py_ssize_t j = 0; j < below && distinct < maximum; j++)
                if (distinct == 0 || tmp[j] != tmp[distinct - 1])
                    tmp[distinct++] = tmp[j];
            if (distinct >= maximum || bound >= 18446744073709551616.0)
                break;
            bound *= 2;
        }
        memcpy(hashes, tmp, sizeof(uint64_t) * (size_t)distinct);
    } else {
        /* All of them: the distinct ones in the order they first come, through an open-addressing set (the
         * hashes are mixed already: their low bits are the slot). */
        size_t slots = 16;
        while (slots < 2 * (size_t)count)
            slots *= 2;
        set = malloc(sizeof(uint64_t) * slots);
        used = calloc(slots, 1);
        if (set == NULL || used == NULL) {
            PyErr_NoMemory();
            goto done;
        }
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
    }
    if (distinct < minimum)
        distinct = 0;
    result = PyBytes_FromStringAndSize((const char *)hashes, (Py_ssize_t)sizeof(uint64_t) * distinct);
done:
    free(words);
    free(hashes);
    free(tmp);
    free(set);
    free(used);
    PyBuffer_Release(&data);
    Py_XDECREF(encoded);
    return result;
}

/* Each byte value's weight at each of the 8 byte places, then each bit's from those: 2,048 counters
 * instead of 64 a hash. */
static inline void count_bytes(int64_t counts[8][256], const unsigned char *hash, int64_t weight) {
    uint64_t value;
    memcpy(&value, hash, 8);
    for (int place = 0; place < 8; place++)
        counts[place][(value >> (8 * place)) & 0xFF] += weight;
}

/* The fingerprint the counts vote for: bit i set when the weight with it set is over half the total. */
static PyObject *vote(int64_t counts[8][256], int64_t total) {
    if (total == 0)
        Py_RETURN_NONE;
    int64_t votes[64] = {0};
    for (int place = 0; place < 8; place++)
        for (int value = 0; value < 256; value++) {
            int64_t count = counts[place][value];
            if (count == 0)
                continue;
            for (int bit = 0; bit < 8; bit++)
                votes[8 * place + bit] += count & -(int64_t)(value >> bit & 1);
        }
    uint64_t fingerprint = 0;
    for (int bit = 0; bit < 64; bit++)
        if (2 * votes[bit] > total)
            fingerprint |= 1ULL << bit;
    return PyLong_FromUnsignedLongLong(fingerprint);
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

static PyObject *sketch_count(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer sketch, hashes;
    if (!PyArg_ParseTuple(args, "w*y*", &sketch, &hashes))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t row;
    unsigned char *seen = NULL;
    if (sketch_rows(&sketch, &hashes, &row) < 0)
        goto done;
    /* A counter that two of the page's shingles share counts the page once: a bit a counter. */
    seen = calloc((size_t)sketch.len / 8 + 1, 1);
    if (seen == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    unsigned char *counters = sketch.buf;
    const unsigned char *bytes = hashes.buf;
    for (Py_ssize_t i = 0; i < hashes.len / 8; i++) {
        uint64_t value;
        memcpy(&value, bytes + 8 * i, 8);
        Py_ssize_t at[2] = {(Py_ssize_t)(value & (uint64_t)(row - 1)),
                            row + (Py_ssize_t)((value >> 32) & (uint64_t)(row - 1))};
        for (int r = 0; r < 2; r++)
            if (!(seen[at[r] >> 3] & (1 << (at[r] & 7)))) {
                seen[at[r] >> 3] |= (unsigned char)(1 << (at[r] & 7));
                counters[at[r]]++;
            }
    }
    result = Py_NewRef(Py_None);
done:
    free(seen);
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
    if (sketch_rows(&sketch, &hashes, &row) < 0)
        goto done;
    int64_t counts[8][256];
    memset(counts, 0, sizeof counts);
    int64_t total = 0;
    const unsigned char *counters = sketch.buf, *bytes = hashes.buf;
    for (Py_ssize_t i = 0; i < hashes.len / 8; i++) {
        uint64_t value;
        memcpy(&value, bytes + 8 * i, 8);
        unsigned char first = counters[value & (uint64_t)(row - 1)];
        unsigned char second = counters[row + (Py_ssize_t)((value >> 32) & (uint64_t)(row - 1))];
        if ((first < second ? first : second) < template) {
            total++;
            count_bytes(counts, bytes + 8 * i, 1);
        }
    }
    result = vote(counts, total);
done:
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
    int64_t counts[8][256];
    memset(counts, 0, sizeof counts);
    int64_t total = 0;
    const unsigned char *bytes = hashes.buf;
    const int32_t *w = weights.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t weight = w != NULL ? w[i] : 1;
        if (weight != 0) {
            total += weight;
            count_bytes(counts, bytes + 8 * i, weight);
        }
    }
    result = vote(counts, total);
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
    {"sketch_count", sketch_count, METH_VARARGS, "Count a page's hashes in a site's sketch, each counter once."},
    {"template_simhash", template_simhash, METH_VARARGS,
     "The SimHash of the hashes the sketch has seen fewer than template times; None if none."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_simhash", "The near-duplicate fingerprint's kernels (see _simhash.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__simhash(void) {
    for (int c = 0; c < 256; c++)
        fold[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c >= 0x80 ? c
                  : (c >= 'A' && c <= 'Z')                                    ? c + ('a' - 'A')
                                                                               : 0;
    uint64_t power = 1;
    for (int place = 0; place < MAX_WORD_BYTES; place++)
        powers[place] = power *= BYTE_MULTIPLIER;
    return PyModule_Create(&module);
}
