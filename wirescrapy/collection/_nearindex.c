/* The near-duplicate index's lookup (collection/nearduplicates.py, NearDuplicateIndex.query): the buckets
 * a query reads in the banded tables, and the fingerprints in them within the threshold.
 *
 * A lookup at a 7-bit threshold reads hundreds of small buckets scattered over tables of millions of
 * fingerprints: its time is the memory's latency, not arithmetic. numpy reads them one array operation at
 * a time, each waiting on its misses in turn; this loop computes every bucket first and prefetches the
 * bucket table's rows, then the buckets' first fingerprints, so that the reads are in flight together.
 *
 * lookup(hashes, ids, starts, offset, mask, shift, flip, row, query, distance) -> [(distance, doc_id)]
 *   hashes  uint64[n]  the tables' fingerprints, each table sorted by bucket
 *   ids     uint32[n]  their doc-ids
 *   starts  int64[r+1] where each bucket begins in hashes (the bucket table, tables one after another)
 *   offset, mask, shift, flip: uint64[p], row: int64[p], one per bucket to read: the bucket is
 *     ((((query >> offset) & mask) >> shift) ^ flip) + row
 * Every fingerprint within ``distance`` bits of ``query``, in table order: a doc-id may come more than once.
 * The caller (NearDuplicateIndex) builds the arrays; this file checks their kinds and lengths, and each
 * bucket row and each start against them.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

static int buffer_of(Py_buffer *view, Py_ssize_t itemsize, const char *name) {
    if (view->len % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: items of %zd bytes expected", name, itemsize);
        return -1;
    }
    return 0;
}

/* Appends (distance, doc-id) to found for each fingerprint within distance of query in the buckets rows;
 * -1 on an error (a bucket past the fingerprints, no memory). */
#define SCAN_BODY                                                                                            \
    for (Py_ssize_t i = 0; i < p; i++) {                                                                   \
        int64_t lo = st[rows[i]], hi = st[rows[i] + 1];                                                     \
        if (lo < 0 || hi > n || lo > hi) {                                                                  \
            PyErr_SetString(PyExc_ValueError, "lookup: a bucket past the fingerprints");                    \
            return -1;                                                                                      \
        }                                                                                                   \
        for (int64_t j = lo; j < hi; j++) {                                                                 \
            int bits = __builtin_popcountll(h[j] ^ query);                                                  \
            if (bits <= distance) {                                                                         \
                PyObject *pair = Py_BuildValue("(iI)", bits, (unsigned int)id[j]);                          \
                if (pair == NULL || PyList_Append(found, pair) < 0) {                                       \
                    Py_XDECREF(pair);                                                                       \
                    return -1;                                                                              \
                }                                                                                           \
                Py_DECREF(pair);                                                                            \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
    return 0;

#define SCAN_ARGS                                                                                            \
    const uint64_t *h, const uint32_t *id, Py_ssize_t n, const int64_t *st, const int64_t *rows, Py_ssize_t p, \
        uint64_t query, int distance, PyObject *found

static int scan_portable(SCAN_ARGS) { SCAN_BODY }

#if defined(__x86_64__) && defined(__GNUC__)
/* The same loop with the CPU's population count instruction, where it has one (most of the time goes to
 * counting the bits of the buckets' fingerprints). */
__attribute__((target("popcnt"))) static int scan_popcnt(SCAN_ARGS) { SCAN_BODY }

static int scan(SCAN_ARGS) {
    static int has_popcnt = -1;
    if (has_popcnt < 0) {
        __builtin_cpu_init();
        has_popcnt = __builtin_cpu_supports("popcnt");
    }
    return has_popcnt ? scan_popcnt(h, id, n, st, rows, p, query, distance, found)
                      : scan_portable(h, id, n, st, rows, p, query, distance, found);
}
#else
static int scan(SCAN_ARGS) { return scan_portable(h, id, n, st, rows, p, query, distance, found); }
#endif

static PyObject *lookup(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer hashes, ids, starts, offset, mask, shift, flip, row;
    unsigned long long query_value;
    int distance;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*Ki", &hashes, &ids, &starts, &offset, &mask, &shift, &flip,
                          &row, &query_value, &distance))
        return NULL;
    PyObject *found = NULL;
    int64_t *rows = NULL;
    Py_ssize_t n = hashes.len / 8, r = starts.len / 8, p = offset.len / 8;
    if (buffer_of(&hashes, 8, "hashes") || buffer_of(&ids, 4, "ids") || buffer_of(&starts, 8, "starts") ||
        buffer_of(&offset, 8, "offset") || buffer_of(&mask, 8, "mask") || buffer_of(&shift, 8, "shift") ||
        buffer_of(&flip, 8, "flip") || buffer_of(&row, 8, "row"))
        goto done;
    if (ids.len / 4 != n || mask.len / 8 != p || shift.len / 8 != p || flip.len / 8 != p || row.len / 8 != p) {
        PyErr_SetString(PyExc_ValueError, "lookup: the arrays' lengths disagree");
        goto done;
    }
    const uint64_t *h = hashes.buf, *off = offset.buf, *msk = mask.buf, *sh = shift.buf, *fl = flip.buf;
    const uint32_t *id = ids.buf;
    const int64_t *st = starts.buf, *rw = row.buf;
    const uint64_t query = (uint64_t)query_value;
    rows = malloc(sizeof(int64_t) * (size_t)(p ? p : 1));
    found = PyList_New(0);
    if (rows == NULL || found == NULL) {
        if (rows == NULL)
            PyErr_NoMemory();
        Py_CLEAR(found);
        goto done;
    }
    for (Py_ssize_t i = 0; i < p; i++) {
        if (sh[i] > 63) {
            PyErr_SetString(PyExc_ValueError, "lookup: a shift past 63 bits");
            Py_CLEAR(found);
            goto done;
        }
        int64_t bucket = (int64_t)((((query >> off[i]) & msk[i]) >> sh[i]) ^ fl[i]) + rw[i];
        if (bucket < 0 || bucket + 1 >= r) {
            PyErr_SetString(PyExc_ValueError, "lookup: a bucket past the bucket table");
            Py_CLEAR(found);
            goto done;
        }
        rows[i] = bucket;
        __builtin_prefetch(&st[bucket]);
    }
    for (Py_ssize_t i = 0; i < p; i++) {
        int64_t lo = st[rows[i]];
        if (lo >= 0 && lo < n)
            __builtin_prefetch(&h[lo]);
    }
    if (scan(h, id, n, st, rows, p, query, distance, found) < 0)
        Py_CLEAR(found);
done:
    free(rows);
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&offset);
    PyBuffer_Release(&mask);
    PyBuffer_Release(&shift);
    PyBuffer_Release(&flip);
    PyBuffer_Release(&row);
    return found;
}

static PyMethodDef methods[] = {
    {"lookup", lookup, METH_VARARGS, "The fingerprints within the threshold in a query's buckets."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_nearindex", "The near-duplicate index's lookup (see _nearindex.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__nearindex(void) { return PyModule_Create(&module); }
