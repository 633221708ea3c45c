/* The manager's sparse products on every core: y = A x for a CSR matrix A, and the vector passes that
 * close a PageRank or HITS iteration (manager/ranking.py). Also the one-pass loops over the links that
 * numpy would need several passes and arrays of one entry a link for: the link graph without self-links
 * and its transpose (ranking.py), and the sites' counts (sites.py). Those run on one thread.
 *
 * One iteration of PageRank or HITS touches every link once; at millions of pages that is bound by memory,
 * not arithmetic: the stream of column indices, and the reads of x, which follow the links out of order.
 * One core cannot keep enough reads in flight, so the rows are cut into chunks of about equal links plus
 * rows, which threads claim one at a time (a thread the system leaves waiting holds up one chunk, not a
 * share of the work), and the x of the links a little ahead is prefetched. A row is summed in link order,
 * in double, and rounded once to the vector's type: a float32 product is closer to the exact one than a
 * float32 accumulator would make it. The sums over a vector (its total, an L1 change) are added per chunk
 * in double, then in chunk order. The chunks depend on the matrix alone, so every result is the same
 * whatever the number of threads.
 *
 * Types: the row pointers and column indices are both int32 or both int64 (scipy keeps them alike); the
 * values, x and y are all float32 or all float64; the values may be None, every entry 1 (the link graph's
 * pattern, which then costs no value array at all). The caller checks the matrix (ranking.py,
 * ``_Product``): row pointers non-decreasing from 0 to the number of links, column indices within x. This
 * file checks the buffers' kinds and lengths. The GIL is released while the threads run; threads are
 * started per call (POSIX threads: no OpenMP runtime to install, and nothing left running after a fork).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAX_THREADS 64
/* Links plus rows of a chunk, and the most chunks of a call: enough chunks that a thread held up by the
 * system costs little, few enough that claiming them costs nothing. Less work than a chunk is done by the
 * calling thread alone: starting threads would cost more than they save. */
#define CHUNK_WORK (1 << 16)
#define MAX_CHUNKS 4096
/* Links ahead whose x is prefetched, and that link's position (the last one's near the end). */
#define AHEAD 64
#define AHEAD_OF(link) ((int64_t)(link) + AHEAD < last ? (int64_t)(link) + AHEAD : last)

typedef enum { PRODUCT, SPREAD, RESCALE } task_kind;

typedef struct {
    task_kind kind;
    int wide_index; /* int64 row pointers and indices */
    int wide_value; /* float64 values and vectors */
    const void *indptr, *indices, *data, *x;
    void *y;
    /* SPREAD: scores[i] = y[i] + add (× jump[i]); scaled[i] = scores[i] × scale[i].
     * RESCALE: y *= factor. */
    void *scores, *scaled;
    const void *scale, *jump;
    double add, factor;
} task;

/* One call's work: its rows cut into chunks of about equal links + rows, which the threads claim one
 * at a time. A thread the system leaves waiting holds up only the chunk it has, not a fixed share. */
typedef struct {
    const task *task;
    Py_ssize_t rows;
    int64_t work; /* rows + links */
    int chunks;
    atomic_int next;           /* the next chunk to claim */
    double totals[MAX_CHUNKS]; /* each chunk's total, added in chunk order at the end */
} schedule;

/* Two partial sums per row, so that the additions do not all wait on each other. The x of the link AHEAD
 * links on is prefetched, whatever row it is in: most rows are short, and x is read out of order. */
#define PRODUCT_ROWS(NAME, I, T)                                                                             \
    static double NAME(const task *t, Py_ssize_t begin, Py_ssize_t end) {                                   \
        const I *indptr = t->indptr, *indices = t->indices;                                                  \
        const T *data = t->data, *x = t->x;                                                                  \
        T *y = t->y;                                                                                         \
        const int64_t last = (int64_t)indptr[end] - 1;                                                       \
        (void)data;                                                                                          \
        double total = 0;                                                                                    \
        for (Py_ssize_t row = begin; row < end; row++) {                                                     \
            double s0 = 0, s1 = 0;                                                                           \
            int64_t link = indptr[row];                                                                      \
            const int64_t stop = indptr[row + 1];                                                            \
            for (; stop - link >= 2; link += 2) {                                                            \
                __builtin_prefetch(&x[indices[AHEAD_OF(link)]]);                                           \
                __builtin_prefetch(&x[indices[AHEAD_OF(link + 1)]]);                                       \
                s0 += WEIGHT(link) * x[indices[link]];                                                       \
                s1 += WEIGHT(link + 1) * x[indices[link + 1]];                                               \
            }                                                                                                \
            if (link < stop) {                                                                               \
                __builtin_prefetch(&x[indices[AHEAD_OF(link)]]);                                           \
                s0 += WEIGHT(link) * x[indices[link]];                                                       \
            }                                                                                                \
            y[row] = (T)(s0 + s1);                                                                           \
            total += y[row];                                                                                 \
        }                                                                                                    \
        return total;                                                                                        \
    }

/* The pattern (no values, every entry 1) and the weighted product are separate loops. */
#define WEIGHT(link) 1.0
PRODUCT_ROWS(pattern_i32_f32, int32_t, float)
PRODUCT_ROWS(pattern_i32_f64, int32_t, double)
PRODUCT_ROWS(pattern_i64_f32, int64_t, float)
PRODUCT_ROWS(pattern_i64_f64, int64_t, double)
#undef WEIGHT
#define WEIGHT(link) (double)data[link]
PRODUCT_ROWS(product_i32_f32, int32_t, float)
PRODUCT_ROWS(product_i32_f64, int32_t, double)
PRODUCT_ROWS(product_i64_f32, int64_t, float)
PRODUCT_ROWS(product_i64_f64, int64_t, double)

#define SPREAD_ROWS(NAME, T)                                                                                 \
    static double NAME(const task *t, Py_ssize_t begin, Py_ssize_t end) {                                   \
        const T *y = t->y, *scale = t->scale, *jump = t->jump;                                               \
        T *scores = t->scores, *scaled = t->scaled;                                                          \
        double change = 0;                                                                                   \
        for (Py_ssize_t i = begin; i < end; i++) {                                                           \
            T value = i == 0 ? 0 : (T)(y[i] + t->add * (jump == NULL ? 1.0 : (double)jump[i]));             \
            change += fabs((double)scores[i] - (double)value);                                               \
            scores[i] = value;                                                                               \
            scaled[i] = value * scale[i];                                                                    \
        }                                                                                                    \
        return change;                                                                                       \
    }

SPREAD_ROWS(spread_f32, float)
SPREAD_ROWS(spread_f64, double)

#define RESCALE_ROWS(NAME, T)                                                                                \
    static double NAME(const task *t, Py_ssize_t begin, Py_ssize_t end) {                                   \
        T *y = t->y;                                                                                         \
        const T *old = t->x;                                                                                 \
        const T factor = (T)t->factor;                                                                       \
        double change = 0;                                                                                   \
        for (Py_ssize_t i = begin; i < end; i++) {                                                           \
            y[i] *= factor;                                                                                  \
            change += fabs((double)old[i] - (double)y[i]);                                                   \
        }                                                                                                    \
        return change;                                                                                       \
    }

RESCALE_ROWS(rescale_f32, float)
RESCALE_ROWS(rescale_f64, double)

static double run_rows(const task *t, Py_ssize_t begin, Py_ssize_t end) {
    switch (t->kind) {
    case PRODUCT:
        if (t->data == NULL)
            return t->wide_index ? (t->wide_value ? pattern_i64_f64 : pattern_i64_f32)(t, begin, end)
                                 : (t->wide_value ? pattern_i32_f64 : pattern_i32_f32)(t, begin, end);
        return t->wide_index ? (t->wide_value ? product_i64_f64 : product_i64_f32)(t, begin, end)
                             : (t->wide_value ? product_i32_f64 : product_i32_f32)(t, begin, end);
    case SPREAD:
        return (t->wide_value ? spread_f64 : spread_f32)(t, begin, end);
    case RESCALE:
        return (t->wide_value ? rescale_f64 : rescale_f32)(t, begin, end);
    }
    return 0;
}

static int64_t row_start(const task *t, Py_ssize_t row) {
    if (t->kind != PRODUCT) return 0;
    return t->wide_index ? ((const int64_t *)t->indptr)[row] : ((const int32_t *)t->indptr)[row];
}

/* The first row of chunk k: the first row whose links + rows before it reach k/chunks of the work. */
static Py_ssize_t chunk_start(const schedule *s, int k) {
    if (k >= s->chunks) return s->rows;
    const int64_t goal = s->work * k / s->chunks;
    Py_ssize_t low = 0, high = s->rows;
    while (low < high) {
        const Py_ssize_t middle = low + (high - low) / 2;
        if (middle + row_start(s->task, middle) < goal)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

static void *claim_chunks(void *argument) {
    schedule *s = argument;
    for (int k; (k = atomic_fetch_add(&s->next, 1)) < s->chunks;)
        s->totals[k] = run_rows(s->task, chunk_start(s, k), chunk_start(s, k + 1));
    return NULL;
}

/* Run ``t`` over rows [0, rows) on ``threads`` threads (the calling one among them) and add up the chunks'
 * totals in order. Without a thread the calling one does all the chunks. */
static double run(const task *t, Py_ssize_t rows, int threads) {
    schedule s = {.task = t, .rows = rows, .work = rows + row_start(t, rows)};
    const int64_t chunks = s.work / CHUNK_WORK;
    s.chunks = chunks < 1 ? 1 : chunks < MAX_CHUNKS ? (int)chunks : MAX_CHUNKS;
    if (threads > s.chunks) threads = s.chunks;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    atomic_init(&s.next, 0);
    pthread_t thread[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int k = 1; k < threads; k++) started[k] = pthread_create(&thread[k], NULL, claim_chunks, &s) == 0;
    claim_chunks(&s);
    for (int k = 1; k < threads; k++)
        if (started[k]) pthread_join(thread[k], NULL);
    double total = 0;
    for (int k = 0; k < s.chunks; k++) total += s.totals[k];
    return total;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Python side: buffers are checked for kind, size and length here; values for ranges by the caller. */

typedef struct {
    Py_buffer views[8];
    int count;
} views;

static void release(views *v) {
    for (int k = 0; k < v->count; k++) PyBuffer_Release(&v->views[k]);
}

/* A C-contiguous one-dimensional buffer of ``kind`` ('i' integer, 'f' floating) and ``itemsize`` bytes per
 * item, ``length`` items unless -1 (then any). */
static const void *take(views *v, PyObject *object, const char *name, char kind, Py_ssize_t itemsize,
                        Py_ssize_t length, int writable) {
    Py_buffer *view = &v->views[v->count];
    if (PyObject_GetBuffer(object, view, PyBUF_ND | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return NULL;
    v->count++;
    const char *format = view->format;
    if (format[0] == '<' || format[0] == '=' || format[0] == '@') format++;
    const int integer = format[0] == 'i' || format[0] == 'l' || format[0] == 'q';
    const int floating = format[0] == 'f' || format[0] == 'd';
    const int right_kind = kind == 'i' ? integer : floating;
    if (view->ndim != 1 || format[1] != '\0' || view->itemsize != itemsize || !right_kind) {
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous 1-d array of %s%d", name,
                     kind == 'i' ? "int" : "float", (int)(8 * itemsize));
        return NULL;
    }
    if (length >= 0 && view->shape[0] != length) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd entries, got %zd", name, length, view->shape[0]);
        return NULL;
    }
    return view->buf;
}

static PyObject *product(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *indptr, *indices, *data, *x, *y;
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOOi:product", &indptr, &indices, &data, &x, &y, &threads)) return NULL;
    views v = {.count = 0};
    task t = {.kind = PRODUCT};
    Py_ssize_t rows = 0;
    PyObject *result = NULL;
    Py_buffer probe;
    if (PyObject_GetBuffer(y, &probe, PyBUF_ND) < 0) return NULL;
    rows = probe.ndim == 1 ? probe.shape[0] : -1;
    t.wide_value = probe.itemsize == 8;
    PyBuffer_Release(&probe);
    if (PyObject_GetBuffer(indptr, &probe, PyBUF_ND) < 0) return NULL;
    t.wide_index = probe.itemsize == 8;
    PyBuffer_Release(&probe);
    const Py_ssize_t index_size = t.wide_index ? 8 : 4, value_size = t.wide_value ? 8 : 4;
    if (!(t.y = (void *)take(&v, y, "y", 'f', value_size, -1, 1))) goto done;
    if (!(t.indptr = take(&v, indptr, "indptr", 'i', index_size, rows + 1, 0))) goto done;
    const Py_ssize_t links =
        t.wide_index ? ((const int64_t *)t.indptr)[rows] : ((const int32_t *)t.indptr)[rows];
    if (!(t.indices = take(&v, indices, "indices", 'i', index_size, links, 0))) goto done;
    if (data != Py_None && !(t.data = take(&v, data, "data", 'f', value_size, links, 0))) goto done;
    if (!(t.x = take(&v, x, "x", 'f', value_size, -1, 0))) goto done;
    double total;
    Py_BEGIN_ALLOW_THREADS;
    total = run(&t, rows, threads);
    Py_END_ALLOW_THREADS;
    result = PyFloat_FromDouble(total);
done:
    release(&v);
    return result;
}

static PyObject *spread(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *y, *scores, *scaled, *scale, *jump;
    double add;
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOdOi:spread", &y, &scores, &scaled, &scale, &add, &jump, &threads))
        return NULL;
    views v = {.count = 0};
    task t = {.kind = SPREAD, .add = add};
    PyObject *result = NULL;
    Py_buffer probe;
    if (PyObject_GetBuffer(y, &probe, PyBUF_ND) < 0) return NULL;
    const Py_ssize_t rows = probe.ndim == 1 ? probe.shape[0] : -1;
    t.wide_value = probe.itemsize == 8;
    PyBuffer_Release(&probe);
    const Py_ssize_t size = t.wide_value ? 8 : 4;
    if (!(t.y = (void *)take(&v, y, "y", 'f', size, rows, 0))) goto done;
    if (!(t.scores = (void *)take(&v, scores, "scores", 'f', size, rows, 1))) goto done;
    if (!(t.scaled = (void *)take(&v, scaled, "scaled", 'f', size, rows, 1))) goto done;
    if (!(t.scale = take(&v, scale, "scale", 'f', size, rows, 0))) goto done;
    if (jump != Py_None && !(t.jump = take(&v, jump, "jump", 'f', size, rows, 0))) goto done;
    double change;
    Py_BEGIN_ALLOW_THREADS;
    change = run(&t, rows, threads);
    Py_END_ALLOW_THREADS;
    result = PyFloat_FromDouble(change);
done:
    release(&v);
    return result;
}

static PyObject *rescale(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *y, *old;
    double factor;
    int threads;
    if (!PyArg_ParseTuple(args, "OOdi:rescale", &y, &old, &factor, &threads)) return NULL;
    views v = {.count = 0};
    task t = {.kind = RESCALE, .factor = factor};
    PyObject *result = NULL;
    Py_buffer probe;
    if (PyObject_GetBuffer(y, &probe, PyBUF_ND) < 0) return NULL;
    const Py_ssize_t rows = probe.ndim == 1 ? probe.shape[0] : -1;
    t.wide_value = probe.itemsize == 8;
    PyBuffer_Release(&probe);
    const Py_ssize_t size = t.wide_value ? 8 : 4;
    if (!(t.y = (void *)take(&v, y, "y", 'f', size, rows, 1))) goto done;
    if (!(t.x = take(&v, old, "old", 'f', size, rows, 0))) goto done;
    double change;
    Py_BEGIN_ALLOW_THREADS;
    change = run(&t, rows, threads);
    Py_END_ALLOW_THREADS;
    result = PyFloat_FromDouble(change);
done:
    release(&v);
    return result;
}

/* ---------------------------------------------------------------------------------------------------- */
/* One pass over rows [start, stop) of the link counts for the sites' estimates (sites.py, ``site_links``):
 * a page's links to itself and links of count <= 0 (``keep`` 0) are skipped; a link inside its site adds
 * one capture to its target and one link to its site's diagonal; a link across sites is written to ``keys``
 * as source site × stride + target site. One thread: the counts are incremented in place. */
#define SITE_PASS(NAME, I)                                                                                   \
    static Py_ssize_t NAME(const I *indptr, const I *indices, const uint8_t *keep, const int32_t *site_of,  \
                           Py_ssize_t start, Py_ssize_t stop, int64_t stride, int32_t *captures,            \
                           double *inside, int64_t *keys) {                                                 \
        Py_ssize_t across = 0;                                                                               \
        for (Py_ssize_t row = start; row < stop; row++) {                                                    \
            const int32_t site = site_of[row];                                                               \
            for (int64_t link = indptr[row]; link < (int64_t)indptr[row + 1]; link++) {                      \
                const I target = indices[link];                                                              \
                if ((Py_ssize_t)target == row || (keep != NULL && !keep[link])) continue;                    \
                const int32_t other = site_of[target];                                                       \
                if (other == site) {                                                                         \
                    captures[target]++;                                                                      \
                    inside[site] += 1;                                                                       \
                } else {                                                                                     \
                    keys[across++] = (int64_t)site * stride + other;                                         \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        return across;                                                                                       \
    }

SITE_PASS(site_pass_i32, int32_t)
SITE_PASS(site_pass_i64, int64_t)

static PyObject *site_pass(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *indptr, *indices, *keep, *site_of, *captures, *inside, *keys;
    Py_ssize_t start, stop;
    long long stride;
    if (!PyArg_ParseTuple(args, "OOOOnnLOOO:site_pass", &indptr, &indices, &keep, &site_of, &start, &stop,
                          &stride, &captures, &inside, &keys))
        return NULL;
    views v = {.count = 0};
    PyObject *result = NULL;
    Py_buffer probe;
    if (PyObject_GetBuffer(indptr, &probe, PyBUF_ND) < 0) return NULL;
    const int wide = probe.itemsize == 8;
    const Py_ssize_t rows = probe.ndim == 1 ? probe.shape[0] - 1 : -1;
    PyBuffer_Release(&probe);
    const Py_ssize_t index_size = wide ? 8 : 4;
    const void *pointers, *targets;
    const uint8_t *kept = NULL;
    const int32_t *sites;
    int32_t *caught;
    double *diagonal;
    int64_t *written;
    if (!(pointers = take(&v, indptr, "indptr", 'i', index_size, -1, 0))) goto done;
    if (rows < 1 || start < 0 || start > stop || stop > rows) {
        PyErr_Format(PyExc_ValueError, "rows %zd to %zd are not within the %zd rows", start, stop, rows);
        goto done;
    }
    const Py_ssize_t links = wide ? ((const int64_t *)pointers)[rows] : ((const int32_t *)pointers)[rows];
    const Py_ssize_t first = wide ? ((const int64_t *)pointers)[start] : ((const int32_t *)pointers)[start];
    const Py_ssize_t last = wide ? ((const int64_t *)pointers)[stop] : ((const int32_t *)pointers)[stop];
    if (!(targets = take(&v, indices, "indices", 'i', index_size, links, 0))) goto done;
    if (keep != Py_None) {
        if (PyObject_GetBuffer(keep, &v.views[v.count], PyBUF_ND) < 0) goto done;
        v.count++;
        if (v.views[v.count - 1].itemsize != 1 || v.views[v.count - 1].len != links) {
            PyErr_SetString(PyExc_ValueError, "keep: expected one byte per link");
            goto done;
        }
        kept = v.views[v.count - 1].buf;
    }
    if (!(sites = take(&v, site_of, "site_of", 'i', 4, rows, 0))) goto done;
    if (!(caught = (int32_t *)take(&v, captures, "captures", 'i', 4, rows, 1))) goto done;
    if (!(diagonal = (double *)take(&v, inside, "inside", 'f', 8, stride, 1))) goto done;
    if (!(written = (int64_t *)take(&v, keys, "keys", 'i', 8, -1, 1))) goto done;
    if (v.views[v.count - 1].shape[0] < last - first) {
        PyErr_SetString(PyExc_ValueError, "keys: fewer entries than the links of the rows");
        goto done;
    }
    Py_ssize_t across;
    Py_BEGIN_ALLOW_THREADS;
    across = wide ? site_pass_i64(pointers, targets, kept, sites, start, stop, stride, caught, diagonal, written)
                  : site_pass_i32(pointers, targets, kept, sites, start, stop, stride, caught, diagonal, written);
    Py_END_ALLOW_THREADS;
    result = PyLong_FromSsize_t(across);
done:
    release(&v);
    return result;
}

/* ---------------------------------------------------------------------------------------------------- */
/* The transpose of a matrix's pattern (ranking.py, ``transpose``): a counting sort of the links by column,
 * on one thread. Each column lists its rows in increasing order. Threads that each wrote a range of rows
 * would share the cache lines of every short column, and lose more than they gain. */
#define TRANSPOSE(NAME, I)                                                                                   \
    static void NAME(const I *indptr, const I *indices, Py_ssize_t rows, Py_ssize_t columns, I *out_indptr,  \
                     I *out_indices) {                                                                       \
        const I links = indptr[rows];                                                                        \
        memset(out_indptr, 0, (size_t)(columns + 1) * sizeof(I));                                            \
        for (I link = 0; link < links; link++) out_indptr[indices[link] + 1]++;                              \
        for (Py_ssize_t column = 0; column < columns; column++) out_indptr[column + 1] += out_indptr[column]; \
        /* out_indptr[c] is now where column c's next row goes; it ends at column c + 1's start. */          \
        for (Py_ssize_t row = 0; row < rows; row++)                                                          \
            for (I link = indptr[row]; link < indptr[row + 1]; link++)                                       \
                out_indices[out_indptr[indices[link]]++] = (I)row;                                           \
        memmove(out_indptr + 1, out_indptr, (size_t)columns * sizeof(I));                                    \
        out_indptr[0] = 0;                                                                                   \
    }

TRANSPOSE(transpose_i32, int32_t)
TRANSPOSE(transpose_i64, int64_t)

static PyObject *transpose(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *indptr, *indices, *out_indptr, *out_indices;
    if (!PyArg_ParseTuple(args, "OOOO:transpose", &indptr, &indices, &out_indptr, &out_indices)) return NULL;
    views v = {.count = 0};
    PyObject *result = NULL;
    Py_buffer probe;
    if (PyObject_GetBuffer(indptr, &probe, PyBUF_ND) < 0) return NULL;
    const int wide = probe.itemsize == 8;
    const Py_ssize_t rows = probe.ndim == 1 ? probe.shape[0] - 1 : -1;
    PyBuffer_Release(&probe);
    if (PyObject_GetBuffer(out_indptr, &probe, PyBUF_ND) < 0) return NULL;
    const Py_ssize_t columns = probe.ndim == 1 ? probe.shape[0] - 1 : -1;
    PyBuffer_Release(&probe);
    const Py_ssize_t size = wide ? 8 : 4;
    const void *pointers, *targets;
    void *out_pointers, *out_targets;
    if (rows < 0 || columns < 0) {
        PyErr_SetString(PyExc_ValueError, "indptr and out_indptr need one entry at least");
        return NULL;
    }
    if (!(pointers = take(&v, indptr, "indptr", 'i', size, rows + 1, 0))) goto done;
    const Py_ssize_t links = wide ? ((const int64_t *)pointers)[rows] : ((const int32_t *)pointers)[rows];
    if (!(targets = take(&v, indices, "indices", 'i', size, links, 0))) goto done;
    if (!(out_pointers = (void *)take(&v, out_indptr, "out_indptr", 'i', size, columns + 1, 1))) goto done;
    if (!(out_targets = (void *)take(&v, out_indices, "out_indices", 'i', size, links, 1))) goto done;
    Py_BEGIN_ALLOW_THREADS;
    if (wide)
        transpose_i64(pointers, targets, rows, columns, out_pointers, out_targets);
    else
        transpose_i32(pointers, targets, rows, columns, out_pointers, out_targets);
    Py_END_ALLOW_THREADS;
    result = Py_NewRef(Py_None);
done:
    release(&v);
    return result;
}

/* ---------------------------------------------------------------------------------------------------- */
/* A matrix's pattern without its diagonal (ranking.py, ``link_matrix``: a page's links to itself), in one
 * pass: the links kept, in their order, into ``out_indices``, and the row pointers into ``out_indptr``. */
#define WITHOUT_DIAGONAL(NAME, I)                                                                            \
    static int64_t NAME(const I *indptr, const I *indices, Py_ssize_t rows, I *out_indptr, I *out_indices) { \
        int64_t kept = 0;                                                                                    \
        out_indptr[0] = 0;                                                                                   \
        for (Py_ssize_t row = 0; row < rows; row++) {                                                        \
            for (I link = indptr[row]; link < indptr[row + 1]; link++)                                       \
                if ((Py_ssize_t)indices[link] != row) out_indices[kept++] = indices[link];                   \
            out_indptr[row + 1] = (I)kept;                                                                   \
        }                                                                                                    \
        return kept;                                                                                         \
    }

WITHOUT_DIAGONAL(without_diagonal_i32, int32_t)
WITHOUT_DIAGONAL(without_diagonal_i64, int64_t)

static PyObject *without_diagonal(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *indptr, *indices, *out_indptr, *out_indices;
    if (!PyArg_ParseTuple(args, "OOOO:without_diagonal", &indptr, &indices, &out_indptr, &out_indices))
        return NULL;
    views v = {.count = 0};
    PyObject *result = NULL;
    Py_buffer probe;
    if (PyObject_GetBuffer(indptr, &probe, PyBUF_ND) < 0) return NULL;
    const int wide = probe.itemsize == 8;
    const Py_ssize_t rows = probe.ndim == 1 ? probe.shape[0] - 1 : -1;
    PyBuffer_Release(&probe);
    const Py_ssize_t size = wide ? 8 : 4;
    const void *pointers, *targets;
    void *out_pointers, *out_targets;
    if (rows < 0) {
        PyErr_SetString(PyExc_ValueError, "indptr needs one entry at least");
        return NULL;
    }
    if (!(pointers = take(&v, indptr, "indptr", 'i', size, rows + 1, 0))) goto done;
    const Py_ssize_t links = wide ? ((const int64_t *)pointers)[rows] : ((const int32_t *)pointers)[rows];
    if (!(targets = take(&v, indices, "indices", 'i', size, links, 0))) goto done;
    if (!(out_pointers = (void *)take(&v, out_indptr, "out_indptr", 'i', size, rows + 1, 1))) goto done;
    if (!(out_targets = (void *)take(&v, out_indices, "out_indices", 'i', size, links, 1))) goto done;
    int64_t kept;
    Py_BEGIN_ALLOW_THREADS;
    kept = wide ? without_diagonal_i64(pointers, targets, rows, out_pointers, out_targets)
                : without_diagonal_i32(pointers, targets, rows, out_pointers, out_targets);
    Py_END_ALLOW_THREADS;
    result = PyLong_FromLongLong(kept);
done:
    release(&v);
    return result;
}

static PyMethodDef product_methods[] = {
    {"product", product, METH_VARARGS,
     "product(indptr, indices, data, x, y, threads) -> float\n\n"
     "y = A x for the CSR matrix (indptr, indices, data); data None means every entry is 1. Returns sum(y)."},
    {"spread", spread, METH_VARARGS,
     "spread(y, scores, scaled, scale, add, jump, threads) -> float\n\n"
     "Ends a PageRank iteration: new = y + add (times jump, if not None), entry 0 set to 0; returns\n"
     "sum(|scores - new|), then scores = new and scaled = new * scale."},
    {"rescale", rescale, METH_VARARGS,
     "rescale(y, old, factor, threads) -> float\n\ny *= factor; returns sum(|old - y|)."},
    {"site_pass", site_pass, METH_VARARGS,
     "site_pass(indptr, indices, keep, site_of, start, stop, stride, captures, inside, keys) -> int\n\n"
     "One pass over rows start..stop of link counts for the sites' estimates (see _product.c); returns\n"
     "the number of links across sites written to keys."},
    {"transpose", transpose, METH_VARARGS,
     "transpose(indptr, indices, out_indptr, out_indices) -> None\n\n"
     "The CSR pattern (indptr, indices) transposed into (out_indptr, out_indices): each column's rows in\n"
     "increasing order. The caller checks the matrix, as for product."},
    {"without_diagonal", without_diagonal, METH_VARARGS,
     "without_diagonal(indptr, indices, out_indptr, out_indices) -> int\n\n"
     "The CSR pattern without its diagonal entries, in order; returns the number of entries kept (the\n"
     "first ones of out_indices). The caller checks the matrix, as for product."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef product_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_product",
    .m_doc = "The manager's sparse products on every core (see _product.c).",
    .m_size = -1,
    .m_methods = product_methods,
};

PyMODINIT_FUNC PyInit__product(void) { return PyModule_Create(&product_module); }
