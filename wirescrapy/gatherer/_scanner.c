/* The gatherer's one-pass HTML scanner (WIRE §7.2.3): links, cleaned document, text, title, base and meta
 * tags of a page, from one left-to-right pass over its UTF-8 bytes, with no tree.
 *
 * WIRE's gatherer parsed pages with an event-oriented parser: tags and text are events handled as they are
 * met, and nothing is built that is not kept. This is such a parser. It tokenizes as the HTML Standard's
 * tokenizer does (§13.2.5: tag, attribute, comment, doctype and bogus-comment states, raw text of <script>
 * (with its escaped and double-escaped states), <style>, <xmp>, <iframe>, <noembed>, <noframes>, RCDATA of
 * <title> and <textarea>, <plaintext>, CDATA in <svg>/<math>, character references with the attribute-value
 * rule for legacy names), so it reads every input to its end: there is no error state. What it does not do
 * is tree construction; where that matters to a crawler it keeps a little state instead:
 *   - an <a> start tag closes the anchor that is open (as the adoption agency does), and so does EOF;
 *   - the content of a discarded element (script, style, svg, object... WIRE_DISCARD_CONTENT) is left out of
 *     the document and the text until its end tag (nested ones counted), </body>, </html> or EOF;
 *     the links inside it are still links (an <a> in an <svg> is followed by browsers);
 *   - <svg> and <math> are foreign content: no raw text inside, CDATA allowed, and an HTML element that
 *     breaks out of foreign content (<p>, <div>, <table>...) ends it; so does the end tag of an HTML element
 *     (</div>, </span>...) that closes no foreign element open inside (their names are kept on a stack);
 *   - <noscript> ends at </noscript>, as for a browser running scripts, whatever it holds (an unclosed
 *     <iframe>, <svg> or comment); its content is read as markup up to there, for its links;
 *   - text inside <head> is not visible text, unless it is not white space (browsers move it to <body>).
 * The text has white space collapsed (Python's str.split() white space, so U+00A0 too); block elements and
 * <br> separate words, inline ones (<b>, <a>, <span>...) do not. The document keeps the tags of
 * WIRE_KEEP_TAGS with the attributes of WIRE_KEEP_ATTRIBUTES, drops comments, doctypes and the rest, writes
 * text and attribute values escaped (& < > and " in values) and collapses runs of white space outside
 * <pre>, <textarea>, <xmp>, <listing>, <plaintext>.
 *
 * Input: valid UTF-8 (the Python side decodes other encodings and replaces invalid bytes). NUL bytes are
 * dropped from text and become U+FFFD in names and values, as the HTML Standard says.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_entities.h" /* generated at build time from html.entities.html5 (setup.py) */

typedef unsigned char u8;

/* ---------------------------------------------------------------------------------------------------- */
/* Growable byte buffers; an allocation failure sets *oom and later writes do nothing.                   */

typedef struct {
    char *data;
    size_t len, cap;
    int *oom;
} Buf;

static int buf_reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 1;
    if (*b->oom) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    char *data = realloc(b->data, cap);
    if (data == NULL) {
        *b->oom = 1;
        return 0;
    }
    b->data = data;
    b->cap = cap;
    return 1;
}

static inline void buf_put(Buf *b, const void *s, size_t n) {
    if (n && buf_reserve(b, n)) {
        memcpy(b->data + b->len, s, n);
        b->len += n;
    }
}

static inline void buf_putc(Buf *b, char c) {
    if (b->len < b->cap || buf_reserve(b, 1)) b->data[b->len++] = c;
}

#define PUT_LITERAL(b, s) buf_put((b), (s), sizeof(s) - 1)

/* ---------------------------------------------------------------------------------------------------- */
/* White space as Python's str.isspace() sees it, on UTF-8: the length of the white-space character at p, */
/* or 0.                                                                                                 */

static const u8 ASCII_SPACE[256] = {
    ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, [' '] = 1,
    [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1,
};

static inline size_t space_at(const u8 *p, const u8 *end) {
    u8 c = *p;
    if (c < 0x80) return ASCII_SPACE[c];
    if (c == 0xC2 && p + 1 < end && (p[1] == 0x85 || p[1] == 0xA0)) return 2;
    if (c < 0xE1 || c > 0xE3 || p + 2 >= end) return 0;
    if (c == 0xE1) return (p[1] == 0x9A && p[2] == 0x80) ? 3 : 0;
    if (c == 0xE3) return (p[1] == 0x80 && p[2] == 0x80) ? 3 : 0;
    if (p[1] == 0x80) return (p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF) && p[2] >= 0x80 ? 3 : 0;
    if (p[1] == 0x81) return p[2] == 0x9F ? 3 : 0;
    return 0;
}

/* HTML's white space inside tags: tab, LF, FF, CR, space. */
static const u8 TAG_SPACE[256] = {['\t'] = 1, ['\n'] = 1, ['\f'] = 1, ['\r'] = 1, [' '] = 1};

/* ---------------------------------------------------------------------------------------------------- */
/* Collapsed text: words joined by one space, no space at either end.                                    */

typedef struct {
    Buf buf;
    int pending; /* a space is due before the next word */
} Text;

static inline void text_break(Text *t) {
    if (t->buf.len) t->pending = 1;
}

static void text_put(Text *t, const u8 *p, size_t n) {
    const u8 *end = p + n;
    while (p < end) {
        size_t space = space_at(p, end);
        if (space) {
            text_break(t);
            p += space;
            continue;
        }
        const u8 *run = p;
        while (p < end && *p && !space_at(p, end)) p++;
        if (p > run) {
            if (t->pending) {
                buf_putc(&t->buf, ' ');
                t->pending = 0;
            }
            buf_put(&t->buf, run, p - run);
        }
        if (p < end && *p == 0) p++; /* NUL: dropped */
    }
}

/* ---------------------------------------------------------------------------------------------------- */
/* Character references (HTML Standard §13.2.5.72-80).                                                   */

static const uint16_t C1_REPLACEMENTS[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
    0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122,
    0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

static size_t utf8_encode(uint32_t cp, u8 *out) {
    if (cp < 0x80) {
        out[0] = (u8)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = 0xC0 | (cp >> 6);
        out[1] = 0x80 | (cp & 0x3F);
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = 0xE0 | (cp >> 12);
        out[1] = 0x80 | ((cp >> 6) & 0x3F);
        out[2] = 0x80 | (cp & 0x3F);
        return 3;
    }
    out[0] = 0xF0 | (cp >> 18);
    out[1] = 0x80 | ((cp >> 12) & 0x3F);
    out[2] = 0x80 | ((cp >> 6) & 0x3F);
    out[3] = 0x80 | (cp & 0x3F);
    return 4;
}

static const wire_entity *entity_find(const wire_entity *table, size_t count, const u8 *name, size_t len) {
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const wire_entity *e = &table[mid];
        size_t common = e->name_len < len ? e->name_len : len;
        int cmp = memcmp(e->name, name, common);
        if (cmp == 0) cmp = (int)e->name_len - (int)len;
        if (cmp == 0) return e;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static inline int is_alpha(u8 c) { return (u8)((c | 0x20) - 'a') < 26; }
static inline int is_digit(u8 c) { return (u8)(c - '0') < 10; }
static inline int is_alnum(u8 c) { return is_alpha(c) || is_digit(c); }
static inline int hex_value(u8 c) {
    if (is_digit(c)) return c - '0';
    c |= 0x20;
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

/* Decodes the reference at p (*p == '&'): writes its UTF-8 to out (at least 8 bytes) and returns the bytes
 * consumed, or 0 if p starts no reference (the '&' is then a plain character). */
static size_t decode_reference(const u8 *p, const u8 *end, int in_attribute, u8 *out, size_t *out_len) {
    const u8 *q = p + 1;
    if (q < end && *q == '#') {
        q++;
        int hex = q < end && (*q | 0x20) == 'x';
        if (hex) q++;
        const u8 *digits = q;
        uint32_t cp = 0;
        while (q < end) {
            int v = hex ? hex_value(*q) : (is_digit(*q) ? *q - '0' : -1);
            if (v < 0) break;
            if (cp <= 0x10FFFF) cp = cp * (hex ? 16 : 10) + v;
            q++;
        }
        if (q == digits) return 0;
        if (q < end && *q == ';') q++;
        if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            cp = 0xFFFD;
        else if (cp >= 0x80 && cp <= 0x9F)
            cp = C1_REPLACEMENTS[cp - 0x80];
        *out_len = utf8_encode(cp, out);
        return q - p;
    }
    const u8 *name = q;
    while (q < end && q - name < 32 && is_alnum(*q)) q++;
    size_t len = q - name;
    if (len == 0) return 0;
    if (q < end && *q == ';') {
        const wire_entity *e = entity_find(WIRE_ENTITIES, WIRE_ENTITY_COUNT, name, len);
        if (e != NULL) {
            memcpy(out, e->value, e->value_len);
            *out_len = e->value_len;
            return q + 1 - p;
        }
    }
    /* Legacy names work without ';' and as a prefix ("&notit;" is "¬it;"), but not in an attribute value
     * when followed by '=' or an alphanumeric ("?a=1&copy=2" keeps its "&copy"). */
    for (size_t k = len < WIRE_LEGACY_MAX ? len : WIRE_LEGACY_MAX; k >= 2; k--) {
        const wire_entity *e = entity_find(WIRE_LEGACY_ENTITIES, WIRE_LEGACY_COUNT, name, k);
        if (e == NULL) continue;
        const u8 *after = name + k;
        if (in_attribute && after < end && (*after == '=' || is_alnum(*after))) return 0;
        memcpy(out, e->value, e->value_len);
        *out_len = e->value_len;
        return after - p;
    }
    return 0;
}

/* Writes the value with references decoded and NUL as U+FFFD. */
static void decode_into(Buf *b, const u8 *p, const u8 *end, int in_attribute) {
    while (p < end) {
        const u8 *run = p;
        while (p < end && *p != '&' && *p) p++;
        buf_put(b, run, p - run);
        if (p == end) break;
        if (*p == 0) {
            PUT_LITERAL(b, "\xEF\xBF\xBD");
            p++;
            continue;
        }
        u8 decoded[8];
        size_t decoded_len;
        size_t used = decode_reference(p, end, in_attribute, decoded, &decoded_len);
        if (used) {
            buf_put(b, decoded, decoded_len);
            p += used;
        } else {
            buf_putc(b, '&');
            p++;
        }
    }
}

/* ---------------------------------------------------------------------------------------------------- */
/* Configuration: known tags and attributes.                                                             */

enum {
    T_KEEP = 1 << 0,      /* written to the document */
    T_DISCARD = 1 << 1,   /* content left out of the document and the text */
    T_BLOCK = 1 << 2,     /* separates words in the text */
    T_VOID = 1 << 3,      /* no content, no end tag */
    T_RAWTEXT = 1 << 4,   /* content is text up to the end tag */
    T_RCDATA = 1 << 5,    /* same, with character references */
    T_PLAINTEXT = 1 << 6, /* the rest of the page is text */
    T_RAW_HIDDEN = 1 << 7,/* raw content not text (script, style, iframe) */
    T_FOREIGN = 1 << 8,   /* svg, math */
    T_BREAKOUT = 1 << 9,  /* ends foreign content */
    T_HEAD = 1 << 10,     /* may stay in <head> */
    T_PRE = 1 << 11,      /* white space kept in the document */
    T_LINK = 1 << 12,     /* has link attributes */
    T_NOSCRIPT = 1 << 13, /* raw text up to its end tag for a browser running scripts (noscript) */
};

enum { TAG_NONE = -1 };
enum { K_A = 1, K_IMG, K_BASE, K_META, K_TITLE, K_HEAD, K_BODY, K_HTML, K_AREA, K_SCRIPT };

#define TAG_SLOTS 512
#define ATTR_SLOTS 256
#define NAME_MAX_LEN 32
#define MAX_LINK_ATTRS 8
#define MAX_ATTRS 64
#define FOREIGN_MAX 64

typedef struct {
    u8 len; /* 0: empty slot */
    char name[NAME_MAX_LEN];
    uint32_t flags;
    int kind;
    int n_link_attrs;
    int link_attrs[MAX_LINK_ATTRS];
    PyObject *pyname;
} TagInfo;

enum { A_KEEP = 1, A_USED = 2 };
enum { AK_HREF = 1, AK_ALT, AK_REL, AK_NAME, AK_CONTENT, AK_CHARSET, AK_HTTP_EQUIV };

typedef struct {
    u8 len;
    char name[NAME_MAX_LEN];
    uint32_t flags;
    int kind;
} AttrInfo;

typedef struct {
    PyObject_HEAD
    TagInfo tags[TAG_SLOTS];
    AttrInfo attrs[ATTR_SLOTS];
} Scanner;

static uint32_t name_hash(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (u8)s[i]) * 16777619u;
    return h;
}

static int tag_slot(Scanner *self, const char *name, size_t len, int create) {
    if (len == 0 || len > NAME_MAX_LEN) return TAG_NONE;
    uint32_t i = name_hash(name, len) & (TAG_SLOTS - 1);
    for (int probes = 0; probes < TAG_SLOTS; probes++, i = (i + 1) & (TAG_SLOTS - 1)) {
        TagInfo *t = &self->tags[i];
        if (t->len == 0) {
            if (!create) return TAG_NONE;
            t->len = (u8)len;
            memcpy(t->name, name, len);
            return (int)i;
        }
        if (t->len == len && memcmp(t->name, name, len) == 0) return (int)i;
    }
    return TAG_NONE;
}

/* The slot of a known tag, with the name's hash already computed. */
static int tag_find(Scanner *self, const char *name, size_t len, uint32_t hash) {
    if (len == 0) return TAG_NONE;
    uint32_t i = hash & (TAG_SLOTS - 1);
    for (int probes = 0; probes < TAG_SLOTS; probes++, i = (i + 1) & (TAG_SLOTS - 1)) {
        TagInfo *t = &self->tags[i];
        if (t->len == 0) return TAG_NONE;
        if (t->len == len && memcmp(t->name, name, len) == 0) return (int)i;
    }
    return TAG_NONE;
}

static int attr_slot(Scanner *self, const char *name, size_t len, int create) {
    if (len == 0 || len > NAME_MAX_LEN) return -1;
    uint32_t i = name_hash(name, len) & (ATTR_SLOTS - 1);
    for (int probes = 0; probes < ATTR_SLOTS; probes++, i = (i + 1) & (ATTR_SLOTS - 1)) {
        AttrInfo *a = &self->attrs[i];
        if (a->len == 0) {
            if (!create) return -1;
            a->len = (u8)len;
            memcpy(a->name, name, len);
            return (int)i;
        }
        if (a->len == len && memcmp(a->name, name, len) == 0) return (int)i;
    }
    return -1;
}

/* ---------------------------------------------------------------------------------------------------- */
/* The scan state.                                                                                       */

typedef struct {
    int tag;          /* tag slot */
    PyObject *value;  /* the decoded attribute value */
    PyObject *text;   /* anchor text, NULL until known */
    int nofollow;
} LinkEntry;

typedef struct {
    int id;           /* attribute slot */
    const u8 *value;  /* raw value, NULL if the attribute has none */
    const u8 *value_end;
} Attr;

typedef struct {
    Scanner *cfg;
    const u8 *start, *end;
    int oom;
    Buf doc;
    Text text;
    Text anchor;      /* the open anchor's text */
    Text title;
    Buf scratch;
    Buf alt;          /* alt of the first <img alt> in the open anchor */
    int has_alt;
    int doc_space;    /* white space is due in the document: ' ', '\n' or 0 */
    int pre;          /* inside elements that keep white space */
    int in_head;
    int title_seen, in_title;
    int discard_tag, discard_depth;
    int foreign_depth; /* the elements open in foreign content: foreign[0..foreign_depth), name hashes */
    uint32_t foreign[FOREIGN_MAX];
    const u8 *page_end; /* inside a <noscript>: the page's end, S->end being the </noscript> */
    struct {
        int discard_tag, discard_depth, pre, in_head;
        size_t links_len;
    } noscript; /* the state at the <noscript>, restored at its end */
    int anchor_open;  /* the open anchor's links: [anchor_first, anchor_last) */
    size_t anchor_first, anchor_last;
    LinkEntry *links;
    size_t links_len, links_cap;
    PyObject *base;   /* first <base href> */
    PyObject *metas;  /* list of (name, content) */
    Attr attrs[MAX_ATTRS];
    int n_attrs;
} State;

static inline uint32_t tag_flags(State *S, int tag) { return tag == TAG_NONE ? 0 : S->cfg->tags[tag].flags; }
static inline int tag_kind(State *S, int tag) { return tag == TAG_NONE ? 0 : S->cfg->tags[tag].kind; }

static void doc_flush_space(State *S) {
    if (S->doc_space) {
        buf_putc(&S->doc, (char)S->doc_space);
        S->doc_space = 0;
    }
}

/* Text to the document, escaped; white space collapsed outside <pre> and the like. */
static void doc_text(State *S, const u8 *p, size_t n) {
    const u8 *end = p + n;
    Buf *b = &S->doc;
    while (p < end) {
        const u8 *run = p;
        if (S->pre) {
            while (p < end && *p != '&' && *p != '<' && *p != '>' && *p) p++;
        } else {
            while (p < end && *p != '&' && *p != '<' && *p != '>' && *p && !TAG_SPACE[*p]) p++;
        }
        if (p > run) {
            doc_flush_space(S);
            buf_put(b, run, p - run);
        }
        if (p == end) break;
        u8 c = *p++;
        if (TAG_SPACE[c]) {
            if (c == '\n')
                S->doc_space = '\n';
            else if (!S->doc_space)
                S->doc_space = ' ';
            continue;
        }
        if (c == 0) continue;
        doc_flush_space(S);
        if (c == '&')
            PUT_LITERAL(b, "&amp;");
        else if (c == '<')
            PUT_LITERAL(b, "&lt;");
        else
            PUT_LITERAL(b, "&gt;");
    }
}

/* A piece of character data (already decoded) to wherever it goes. */
static void emit_chars(State *S, const u8 *p, size_t n) {
    if (S->discard_depth) return;
    if (S->in_title) {
        if (S->in_title == 1) text_put(&S->title, p, n);
    } else if (!S->in_head) {
        text_put(&S->text, p, n);
        if (S->anchor_open) text_put(&S->anchor, p, n);
    }
    doc_text(S, p, n);
}

/* Character data from the page, with references decoded if decode is set. */
static void emit_text(State *S, const u8 *p, size_t n, int decode) {
    if (S->discard_depth) return;
    const u8 *end = p + n;
    if (S->in_head && !S->in_title) {
        /* Text that is not white space ends <head>, as a browser's tree builder does. */
        for (const u8 *q = p; q < end; q++)
            if (!TAG_SPACE[*q]) {
                S->in_head = 0;
                break;
            }
    }
    if (!decode) {
        emit_chars(S, p, n);
        return;
    }
    while (p < end) {
        const u8 *amp = memchr(p, '&', end - p);
        const u8 *stop = amp ? amp : end;
        if (stop > p) emit_chars(S, p, stop - p);
        if (!amp) break;
        u8 decoded[8];
        size_t decoded_len;
        size_t used = decode_reference(amp, end, 0, decoded, &decoded_len);
        if (used) {
            emit_chars(S, decoded, decoded_len);
            p = amp + used;
        } else {
            emit_chars(S, amp, 1);
            p = amp + 1;
        }
    }
}

static void text_block(State *S) {
    text_break(&S->text);
    if (S->anchor_open) text_break(&S->anchor);
}

/* ---------------------------------------------------------------------------------------------------- */
/* Links.                                                                                                */

static PyObject *collapsed(const char *s, size_t n, int *oom) {
    Text t = {{NULL, 0, 0, oom}, 0};
    text_put(&t, (const u8 *)s, n);
    PyObject *result = PyUnicode_DecodeUTF8(t.buf.data ? t.buf.data : "", t.buf.len, "replace");
    free(t.buf.data);
    return result;
}

static int links_push(State *S, int tag, PyObject *value, int nofollow, PyObject *text) {
    if (S->links_len == S->links_cap) {
        size_t cap = S->links_cap ? S->links_cap * 2 : 64;
        LinkEntry *links = realloc(S->links, cap * sizeof(LinkEntry));
        if (links == NULL) {
            S->oom = 1;
            Py_DECREF(value);
            Py_XDECREF(text);
            return 0;
        }
        S->links = links;
        S->links_cap = cap;
    }
    S->links[S->links_len++] = (LinkEntry){tag, value, text, nofollow};
    return 1;
}

static void anchor_close(State *S) {
    if (!S->anchor_open) return;
    S->anchor_open = 0;
    PyObject *text;
    if (S->anchor.buf.len)
        text = PyUnicode_DecodeUTF8(S->anchor.buf.data, S->anchor.buf.len, "replace");
    else if (S->has_alt)
        text = collapsed(S->alt.data ? S->alt.data : "", S->alt.len, &S->oom);
    else
        text = PyUnicode_New(0, 0);
    if (text == NULL) {
        S->oom = 1;
        PyErr_Clear();
        return;
    }
    for (size_t i = S->anchor_first; i < S->anchor_last; i++) {
        Py_INCREF(text);
        Py_XSETREF(S->links[i].text, text);
    }
    Py_DECREF(text);
}

static const Attr *find_attr(State *S, int kind) {
    for (int i = 0; i < S->n_attrs; i++)
        if (S->cfg->attrs[S->attrs[i].id].kind == kind) return &S->attrs[i];
    return NULL;
}

static PyObject *attr_value(State *S, const Attr *a) {
    S->scratch.len = 0;
    if (a->value) decode_into(&S->scratch, a->value, a->value_end, 1);
    return PyUnicode_DecodeUTF8(S->scratch.data ? S->scratch.data : "", S->scratch.len, "replace");
}

static int has_nofollow(State *S) {
    const Attr *rel = find_attr(S, AK_REL);
    if (rel == NULL || rel->value == NULL) return 0;
    S->scratch.len = 0;
    decode_into(&S->scratch, rel->value, rel->value_end, 1);
    const u8 *p = (const u8 *)S->scratch.data, *end = p + S->scratch.len;
    while (p < end) {
        while (p < end && TAG_SPACE[*p]) p++;
        const u8 *word = p;
        while (p < end && !TAG_SPACE[*p]) p++;
        if (p - word == 8 && strncasecmp((const char *)word, "nofollow", 8) == 0) return 1;
    }
    return 0;
}

static void read_links(State *S, int tag) {
    TagInfo *info = &S->cfg->tags[tag];
    int nofollow = -1;
    for (int i = 0; i < info->n_link_attrs; i++) {
        const Attr *a = NULL;
        for (int j = 0; j < S->n_attrs; j++)
            if (S->attrs[j].id == info->link_attrs[i]) {
                a = &S->attrs[j];
                break;
            }
        if (a == NULL) continue;
        if (a->value && a->value < a->value_end && *a->value == '#') continue; /* a place in this page */
        PyObject *value = attr_value(S, a);
        if (value == NULL) {
            S->oom = 1;
            PyErr_Clear();
            return;
        }
        if (nofollow < 0) nofollow = has_nofollow(S);
        PyObject *text = NULL;
        if (info->kind == K_AREA) {
            const Attr *alt = find_attr(S, AK_ALT);
            S->scratch.len = 0;
            if (alt && alt->value) decode_into(&S->scratch, alt->value, alt->value_end, 1);
            text = collapsed(S->scratch.data ? S->scratch.data : "", S->scratch.len, &S->oom);
            if (text == NULL) {
                S->oom = 1;
                PyErr_Clear();
                Py_DECREF(value);
                return;
            }
        }
        if (!links_push(S, tag, value, nofollow, text)) return;
    }
}

/* ---------------------------------------------------------------------------------------------------- */
/* Tags.                                                                                                 */

static void write_start_tag(State *S, int tag) {
    TagInfo *info = &S->cfg->tags[tag];
    Buf *b = &S->doc;
    doc_flush_space(S);
    buf_putc(b, '<');
    buf_put(b, info->name, info->len);
    int meta = info->kind == K_META;
    int content_type = 0;
    if (meta) {
        const Attr *equiv = find_attr(S, AK_HTTP_EQUIV);
        if (equiv && equiv->value) {
            S->scratch.len = 0;
            decode_into(&S->scratch, equiv->value, equiv->value_end, 1);
            const char *s = S->scratch.data;
            size_t n = S->scratch.len;
            while (n && TAG_SPACE[(u8)*s]) s++, n--;
            while (n && TAG_SPACE[(u8)s[n - 1]]) n--;
            content_type = n == 12 && strncasecmp(s, "content-type", 12) == 0;
        }
    }
    for (int i = 0; i < S->n_attrs; i++) {
        const Attr *a = &S->attrs[i];
        AttrInfo *ai = &S->cfg->attrs[a->id];
        if (!(ai->flags & A_KEEP)) continue;
        buf_putc(b, ' ');
        buf_put(b, ai->name, ai->len);
        PUT_LITERAL(b, "=\"");
        /* The cleaned document is UTF-8 whatever the page declared. */
        if (meta && ai->kind == AK_CHARSET) {
            PUT_LITERAL(b, "utf-8\"");
            continue;
        }
        if (meta && content_type && ai->kind == AK_CONTENT) {
            PUT_LITERAL(b, "text/html; charset=utf-8\"");
            continue;
        }
        if (a->value) {
            S->scratch.len = 0;
            decode_into(&S->scratch, a->value, a->value_end, 1);
            const u8 *p = (const u8 *)S->scratch.data, *end = p + S->scratch.len;
            while (p < end) {
                const u8 *run = p;
                while (p < end && *p != '&' && *p != '"' && *p != '<' && *p != '>') p++;
                buf_put(b, run, p - run);
                if (p == end) break;
                switch (*p++) {
                case '&': PUT_LITERAL(b, "&amp;"); break;
                case '"': PUT_LITERAL(b, "&quot;"); break;
                case '<': PUT_LITERAL(b, "&lt;"); break;
                default: PUT_LITERAL(b, "&gt;"); break;
                }
            }
        }
        buf_putc(b, '"');
    }
    buf_putc(b, '>');
}

static void write_end_tag(State *S, int tag) {
    TagInfo *info = &S->cfg->tags[tag];
    doc_flush_space(S);
    PUT_LITERAL(&S->doc, "</");
    buf_put(&S->doc, info->name, info->len);
    buf_putc(&S->doc, '>');
}

static void end_discard(State *S) {
    S->discard_depth = 0;
    S->discard_tag = TAG_NONE;
    text_block(S);
}

/* Foreign content ends (all of it: there is no tree to say where the HTML element around it was). */
static void leave_foreign(State *S) {
    S->foreign_depth = 0;
    if (S->discard_depth && (tag_flags(S, S->discard_tag) & T_FOREIGN)) end_discard(S);
}

static void start_tag(State *S, int tag, int self_closing, uint32_t hash) {
    uint32_t flags = tag_flags(S, tag);
    int kind = tag_kind(S, tag);
    if (S->foreign_depth) {
        if (flags & T_BREAKOUT)
            leave_foreign(S);
        else if (!self_closing && S->foreign_depth < FOREIGN_MAX)
            S->foreign[S->foreign_depth++] = hash;
    } else if ((flags & T_FOREIGN) && !self_closing) {
        S->foreign[0] = hash;
        S->foreign_depth = 1;
    }
    if (tag == TAG_NONE) {
        if (S->in_head && !S->discard_depth) S->in_head = 0;
        return;
    }
    if (kind == K_A) anchor_close(S);
    if (flags & T_LINK) {
        size_t before = S->links_len;
        read_links(S, tag);
        if (kind == K_A && S->links_len > before) {
            S->anchor_open = 1;
            S->anchor_first = before;
            S->anchor_last = S->links_len;
            S->anchor.buf.len = 0;
            S->anchor.pending = 0;
            S->has_alt = 0;
        }
    }
    if (kind == K_IMG && S->anchor_open && !S->has_alt && !S->discard_depth) {
        const Attr *alt = find_attr(S, AK_ALT);
        if (alt) {
            S->has_alt = 1;
            S->alt.len = 0;
            if (alt->value) decode_into(&S->alt, alt->value, alt->value_end, 1);
        }
    }
    if (kind == K_BASE && S->base == NULL && !S->foreign_depth) {
        const Attr *href = find_attr(S, AK_HREF);
        if (href) S->base = attr_value(S, href);
        if (href && S->base == NULL) {
            S->oom = 1;
            PyErr_Clear();
        }
    }
    if (kind == K_META && !S->foreign_depth && !S->discard_depth) {
        const Attr *name = find_attr(S, AK_NAME);
        if (name && name->value) {
            const Attr *content = find_attr(S, AK_CONTENT);
            PyObject *pair = Py_BuildValue("(NN)", attr_value(S, name),
                                           content ? attr_value(S, content) : PyUnicode_New(0, 0));
            if (pair == NULL || PyList_Append(S->metas, pair) < 0) {
                S->oom = 1;
                PyErr_Clear();
            }
            Py_XDECREF(pair);
        }
    }
    if (S->discard_depth) {
        if (tag == S->discard_tag && !(flags & T_VOID) && !self_closing) S->discard_depth++;
        return;
    }
    if (S->in_head && !(flags & T_HEAD)) S->in_head = 0;
    if (kind == K_HEAD) S->in_head = 1;
    if (flags & T_DISCARD) {
        text_block(S);
        if (!(flags & T_VOID) && !(self_closing && (flags & T_FOREIGN))) {
            S->discard_tag = tag;
            S->discard_depth = 1;
        }
        return;
    }
    if (flags & T_BLOCK) text_block(S);
    if (flags & T_KEEP) write_start_tag(S, tag);
    if ((flags & T_PRE) && !(flags & T_VOID)) S->pre++;
}

static void end_tag(State *S, int tag, uint32_t hash) {
    uint32_t flags = tag_flags(S, tag);
    int kind = tag_kind(S, tag);
    if (S->foreign_depth) {
        /* HTML Standard §13.2.6.5, any other end tag: it closes the open foreign element of its name, and an
         * HTML element's end tag (a name the scanner knows, not svg or math) the foreign content around it;
         * other names close nothing. */
        int i = S->foreign_depth - 1;
        while (i >= 0 && S->foreign[i] != hash) i--;
        if (i < 0) {
            if (tag == TAG_NONE || (flags & T_FOREIGN)) return;
            leave_foreign(S);
        } else {
            S->foreign_depth = i;
            if (kind == K_A) anchor_close(S);
            if (i == 0 && S->discard_depth && (tag_flags(S, S->discard_tag) & T_FOREIGN)) {
                end_discard(S); /* its own end tag is not written */
                return;
            }
            if (S->discard_depth) return;
        }
    }
    if (kind == K_A) anchor_close(S);
    if (S->discard_depth) {
        if (tag == S->discard_tag) {
            if (--S->discard_depth == 0) end_discard(S); /* its own end tag is not written */
            return;
        }
        if (kind != K_BODY && kind != K_HTML) return;
        end_discard(S); /* an element left open ends with the page's body */
    }
    if (tag == TAG_NONE) return;
    if (kind == K_HEAD) S->in_head = 0;
    if (flags & T_BLOCK) text_block(S);
    if ((flags & T_PRE) && S->pre) S->pre--;
    if ((flags & T_KEEP) && !(flags & T_VOID)) write_end_tag(S, tag);
}

/* ---------------------------------------------------------------------------------------------------- */
/* The tokenizer.                                                                                        */

/* Reads a tag from p (just after "<" or "</", at its name's first letter) to after its ">": the name's
 * slot in *tag, the known attributes in S->attrs. Returns NULL if the page ends inside the tag (the tag is
 * dropped, as the HTML Standard says). */
/* Reads a tag or attribute name from p (at its first character) to the white space, '/' or '>' after it
 * (or '=' after the first character, for an attribute) into name as the scanner looks it up: ASCII
 * lower-cased, NUL as U+FFFD; *len bytes of it, and *too_long set if it is longer than the scanner knows
 * (name then holds its first *len bytes). Returns the end of the name. */
static inline const u8 *read_name(const u8 *p, const u8 *end, int attribute, char *name, size_t *len,
                                  int *too_long) {
    size_t n = 0;
    *too_long = 0;
    const u8 *first = p;
    for (; p < end; p++) {
        u8 c = *p;
        if (TAG_SPACE[c] || c == '/' || c == '>' || (attribute && c == '=' && p != first)) break;
        if (c == 0) {
            if (n + 3 <= NAME_MAX_LEN) {
                memcpy(name + n, "\xEF\xBF\xBD", 3);
                n += 3;
            } else {
                *too_long = 1;
            }
        } else if (n < NAME_MAX_LEN && !*too_long) {
            name[n++] = (char)((u8)(c - 'A') < 26 ? c | 0x20 : c);
        } else {
            *too_long = 1;
        }
    }
    *len = n;
    return p;
}

static const u8 *read_tag(State *S, const u8 *p, int *tag, int *self_closing, uint32_t *hash) {
    const u8 *end = S->end;
    char name[NAME_MAX_LEN];
    size_t len;
    int too_long;
    p = read_name(p, end, 0, name, &len, &too_long);
    *hash = name_hash(name, len); /* of its first bytes if it is too long: the scanner does not know it */
    *tag = too_long ? TAG_NONE : tag_find(S->cfg, name, len, *hash);
    *self_closing = 0;
    S->n_attrs = 0;
    while (1) {
        /* before attribute name */
        while (p < end && (TAG_SPACE[*p] || *p == '/')) {
            if (*p == '/' && p + 1 < end && p[1] == '>') {
                *self_closing = 1;
                return p + 2;
            }
            p++;
        }
        if (p >= end) return NULL;
        if (*p == '>') return p + 1;
        /* attribute name: an '=' here is its first character */
        char attr[NAME_MAX_LEN];
        size_t name_len;
        int too_long;
        p = read_name(p, end, 1, attr, &name_len, &too_long);
        int id = too_long ? -1 : attr_slot(S->cfg, attr, name_len, 0);
        /* after attribute name */
        while (p < end && TAG_SPACE[*p]) p++;
        const u8 *value = NULL, *value_end = NULL;
        if (p < end && *p == '=') {
            p++;
            while (p < end && TAG_SPACE[*p]) p++;
            if (p >= end) return NULL;
            if (*p == '"' || *p == '\'') {
                const u8 *close = memchr(p + 1, *p, end - p - 1);
                if (close == NULL) return NULL;
                value = p + 1;
                value_end = close;
                p = close + 1;
            } else if (*p != '>') {
                value = p;
                while (p < end && !TAG_SPACE[*p] && *p != '>') p++;
                value_end = p;
            } else {
                value = value_end = p; /* "a=>": an empty value */
            }
        }
        if (id >= 0 && S->n_attrs < MAX_ATTRS) {
            int seen = 0;
            for (int i = 0; i < S->n_attrs; i++)
                if (S->attrs[i].id == id) seen = 1; /* the first of two equal names wins */
            if (!seen) S->attrs[S->n_attrs++] = (Attr){id, value, value_end};
        }
    }
}

/* Whether lt ("<") starts the end tag "</name" of the tag info (any case), followed by white space, '/' or '>'. */
static inline int end_tag_at(const u8 *lt, const u8 *end, const TagInfo *info) {
    const u8 *q = lt + 2 + info->len;
    return q < end && lt[1] == '/' && strncasecmp((const char *)lt + 2, info->name, info->len) == 0 &&
           (TAG_SPACE[*q] || *q == '/' || *q == '>');
}

/* Finds the end tag "</name" of a raw-text or RCDATA element. */
static const u8 *find_end_tag(State *S, const u8 *p, int tag) {
    const TagInfo *info = &S->cfg->tags[tag];
    const u8 *end = S->end;
    while (p < end) {
        const u8 *lt = memchr(p, '<', end - p);
        if (lt == NULL) return end;
        if (end_tag_at(lt, end, info)) return lt;
        p = lt + 1;
    }
    return end;
}

/* Finds the end of a <script>'s content: its end tag, except where the script data states (HTML Standard
 * §13.2.5.15-31) hide it: after "<!--" an end tag still ends the script, but a "<script" starts a nested,
 * "double-escaped" part in which "</script" ends only that part; "-->" ends the escape. Pages wrote
 * <script><!-- document.write("<script>...</script>") --></script> for old browsers. */
static const u8 *find_script_end(State *S, const u8 *p, int tag) {
    const TagInfo *info = &S->cfg->tags[tag];
    const u8 *end = S->end;
    enum { DATA, ESCAPED, DOUBLE_ESCAPED } state = DATA;
    int dashes = 0;
    while (p < end) {
        if (state == DATA) {
            const u8 *lt = memchr(p, '<', end - p);
            if (lt == NULL) return end;
            if (end_tag_at(lt, end, info)) return lt;
            if (end - lt >= 4 && memcmp(lt, "<!--", 4) == 0) {
                state = ESCAPED;
                dashes = 2;
                p = lt + 4;
            } else {
                p = lt + 1;
            }
            continue;
        }
        u8 c = *p;
        if (c == '-') {
            dashes++;
            p++;
            continue;
        }
        if (c == '>' && dashes >= 2) {
            state = DATA;
            dashes = 0;
            p++;
            continue;
        }
        dashes = 0;
        if (c == '<') {
            if (state == ESCAPED && end_tag_at(p, end, info)) return p;
            const u8 *q = p + 1;
            int closing = q < end && *q == '/';
            q += closing;
            if (closing == (state == DOUBLE_ESCAPED) && end - q > 6 && strncasecmp((const char *)q, "script", 6) == 0 &&
                (TAG_SPACE[q[6]] || q[6] == '/' || q[6] == '>')) {
                state = state == ESCAPED ? DOUBLE_ESCAPED : ESCAPED;
                p = q + 7;
                continue;
            }
        }
        p++;
    }
    return end;
}

/* After a start tag of a raw-text, RCDATA or plaintext element: its content up to its end tag. */
static const u8 *raw_content(State *S, const u8 *p, int tag) {
    uint32_t flags = tag_flags(S, tag);
    const u8 *stop = (flags & T_PLAINTEXT)           ? S->end
                     : tag_kind(S, tag) == K_SCRIPT ? find_script_end(S, p, tag)
                                                    : find_end_tag(S, p, tag);
    if (!(flags & T_RAW_HIDDEN)) {
        int title = tag_kind(S, tag) == K_TITLE;
        if (title && !S->discard_depth) S->in_title = S->title_seen ? 2 : 1;
        /* NUL is U+FFFD in raw text, RCDATA and plaintext (it is dropped only from the data state's text) */
        const u8 *q = p, *nul;
        while ((nul = memchr(q, 0, stop - q)) != NULL) {
            emit_text(S, q, nul - q, (flags & T_RCDATA) != 0);
            emit_text(S, (const u8 *)"\xEF\xBF\xBD", 3, 0);
            q = nul + 1;
        }
        emit_text(S, q, stop - q, (flags & T_RCDATA) != 0);
        if (title) S->in_title = 0;
        if (title && !S->discard_depth) S->title_seen = 1;
    }
    return stop;
}

static const u8 *comment_end(const u8 *p, const u8 *end) {
    /* p is just after "<!--" */
    if (p < end && *p == '>') return p + 1;
    if (p + 1 < end && p[0] == '-' && p[1] == '>') return p + 2;
    while (p + 1 < end) {
        const u8 *dash = memchr(p, '-', end - p);
        if (dash == NULL || dash + 1 >= end) return end;
        if (dash[1] != '-') {
            p = dash + 1;
            continue;
        }
        const u8 *q = dash + 2;
        while (q < end && *q == '-') q++;
        if (q < end && *q == '>') return q + 1;
        if (q + 1 < end && q[0] == '!' && q[1] == '>') return q + 2;
        p = q;
    }
    return end;
}

static const u8 *markup_declaration(State *S, const u8 *p) {
    /* p is just after "<!" */
    const u8 *end = S->end;
    if (end - p >= 2 && p[0] == '-' && p[1] == '-') return comment_end(p + 2, end);
    if (S->foreign_depth && end - p >= 7 && memcmp(p, "[CDATA[", 7) == 0) {
        const u8 *q = p + 7, *close = q;
        while ((close = memchr(close, ']', end - close)) != NULL && end - close >= 3 && memcmp(close, "]]>", 3))
            close++;
        if (close == NULL || end - close < 3) close = end;
        emit_text(S, q, close - q, 0);
        return close == end ? end : close + 3;
    }
    const u8 *gt = memchr(p, '>', end - p);
    return gt ? gt + 1 : end;
}

/* A browser running scripts reads a <noscript>'s content as raw text up to </noscript>; one without
 * scripts, as markup. The scanner reads it as markup, for the links in it, but only up to the </noscript>:
 * nothing opened inside (an <iframe> whose raw text would run to the end of the page, an <svg>, a comment, a
 * tag) goes past it, and the state at the <noscript> comes back there. A <noscript> inside is a plain tag. */
static void enter_noscript(State *S, const u8 *p, int tag) {
    S->noscript.discard_tag = S->discard_tag;
    S->noscript.discard_depth = S->discard_depth;
    S->noscript.pre = S->pre;
    S->noscript.in_head = S->in_head;
    S->noscript.links_len = S->links_len;
    S->page_end = S->end;
    S->end = find_end_tag(S, p, tag);
}

static const u8 *leave_noscript(State *S) {
    const u8 *stop = S->end;
    S->end = S->page_end;
    S->page_end = NULL;
    if (S->anchor_open && S->anchor_first >= S->noscript.links_len) anchor_close(S);
    S->foreign_depth = 0;
    S->discard_tag = S->noscript.discard_tag;
    S->discard_depth = S->noscript.discard_depth;
    S->pre = S->noscript.pre;
    S->in_head = S->noscript.in_head;
    return stop;
}

static void scan(State *S) {
    const u8 *p = S->start;
    for (;;) {
        if (p >= S->end) {
            if (S->page_end == NULL) break;
            p = leave_noscript(S);
            continue;
        }
        const u8 *end = S->end;
        const u8 *lt = memchr(p, '<', end - p);
        const u8 *stop = lt ? lt : end;
        if (stop > p) emit_text(S, p, stop - p, 1);
        if (lt == NULL) {
            p = end;
            continue;
        }
        const u8 *q = lt + 1;
        if (q >= end) {
            emit_text(S, lt, 1, 0);
            p = end;
            continue;
        }
        if (is_alpha(*q)) {
            int tag, self_closing;
            uint32_t hash;
            const u8 *after = read_tag(S, q, &tag, &self_closing, &hash);
            if (after == NULL) {
                p = end;
                continue;
            }
            int foreign = S->foreign_depth;
            start_tag(S, tag, self_closing, hash);
            p = after;
            uint32_t flags = tag_flags(S, tag);
            if (!S->foreign_depth && (flags & (T_RAWTEXT | T_RCDATA | T_PLAINTEXT))) p = raw_content(S, p, tag);
            if (!foreign && (flags & T_NOSCRIPT) && S->page_end == NULL) enter_noscript(S, p, tag);
        } else if (*q == '/') {
            q++;
            if (q >= end) {
                emit_text(S, lt, 2, 0);
                p = end;
                continue;
            }
            if (is_alpha(*q)) {
                int tag, self_closing;
                uint32_t hash;
                const u8 *after = read_tag(S, q, &tag, &self_closing, &hash);
                if (after == NULL) {
                    p = end;
                    continue;
                }
                end_tag(S, tag, hash);
                p = after;
            } else if (*q == '>') {
                p = q + 1;
            } else {
                const u8 *gt = memchr(q, '>', end - q); /* bogus comment */
                p = gt ? gt + 1 : end;
            }
        } else if (*q == '!') {
            p = markup_declaration(S, q + 1);
        } else if (*q == '?') {
            const u8 *gt = memchr(q, '>', end - q);
            p = gt ? gt + 1 : end;
        } else {
            emit_text(S, lt, 1, 0);
            p = q;
        }
    }
    anchor_close(S);
}

/* ---------------------------------------------------------------------------------------------------- */
/* Python type.                                                                                          */

static void state_free(State *S) {
    free(S->doc.data);
    free(S->text.buf.data);
    free(S->anchor.buf.data);
    free(S->title.buf.data);
    free(S->scratch.data);
    free(S->alt.data);
    for (size_t i = 0; i < S->links_len; i++) {
        Py_XDECREF(S->links[i].value);
        Py_XDECREF(S->links[i].text);
    }
    free(S->links);
    Py_XDECREF(S->base);
    Py_XDECREF(S->metas);
}

static PyObject *Scanner_scan(Scanner *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    State S;
    memset(&S, 0, sizeof S);
    S.cfg = self;
    S.start = view.buf;
    S.end = S.start + view.len;
    S.doc.oom = S.text.buf.oom = S.anchor.buf.oom = S.title.buf.oom = S.scratch.oom = S.alt.oom = &S.oom;
    S.discard_tag = TAG_NONE;
    S.metas = PyList_New(0);
    if (S.metas == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    buf_reserve(&S.doc, view.len / 3 + 64);
    scan(&S);
    PyBuffer_Release(&view);
    if (S.oom) {
        state_free(&S);
        return PyErr_NoMemory();
    }
    PyObject *links = PyList_New((Py_ssize_t)S.links_len);
    if (links == NULL) {
        state_free(&S);
        return NULL;
    }
    for (size_t i = 0; i < S.links_len; i++) {
        LinkEntry *e = &S.links[i];
        PyObject *text = e->text;
        if (text == NULL) text = PyUnicode_New(0, 0);
        PyObject *item = PyTuple_Pack(4, self->tags[e->tag].pyname, e->value, text, e->nofollow ? Py_True : Py_False);
        if (e->text == NULL) Py_XDECREF(text);
        if (item == NULL) {
            Py_DECREF(links);
            state_free(&S);
            return NULL;
        }
        PyList_SET_ITEM(links, (Py_ssize_t)i, item);
    }
    PyObject *result = NULL;
    PyObject *document = PyBytes_FromStringAndSize(S.doc.data ? S.doc.data : "", (Py_ssize_t)S.doc.len);
    PyObject *text = PyUnicode_DecodeUTF8(S.text.buf.data ? S.text.buf.data : "", (Py_ssize_t)S.text.buf.len,
                                          "replace");
    PyObject *title = PyUnicode_DecodeUTF8(S.title.buf.data ? S.title.buf.data : "",
                                           (Py_ssize_t)S.title.buf.len, "replace");
    if (document && text && title)
        result = PyTuple_Pack(6, document, text, title, S.base ? S.base : Py_None, links, S.metas);
    Py_XDECREF(document);
    Py_XDECREF(text);
    Py_XDECREF(title);
    Py_DECREF(links);
    state_free(&S);
    return result;
}

static int add_tags(Scanner *self, PyObject *names, uint32_t flags, int kind) {
    PyObject *iterator = PyObject_GetIter(names);
    if (iterator == NULL) return -1;
    PyObject *item;
    while ((item = PyIter_Next(iterator)) != NULL) {
        Py_ssize_t len;
        const char *name = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &len) : NULL;
        int slot = name ? tag_slot(self, name, len, 1) : TAG_NONE;
        if (slot == TAG_NONE) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "bad tag name %R", item);
            Py_DECREF(item);
            Py_DECREF(iterator);
            return -1;
        }
        TagInfo *t = &self->tags[slot];
        t->flags |= flags;
        if (kind) t->kind = kind;
        if (t->pyname == NULL) {
            t->pyname = item;
            PyUnicode_InternInPlace(&t->pyname);
        } else {
            Py_DECREF(item);
        }
    }
    Py_DECREF(iterator);
    return PyErr_Occurred() ? -1 : 0;
}

static int add_builtin_tags(Scanner *self, const char *names, uint32_t flags, int kind) {
    PyObject *string = PyUnicode_FromString(names);
    if (string == NULL) return -1;
    PyObject *list = PyUnicode_Split(string, NULL, -1);
    Py_DECREF(string);
    if (list == NULL) return -1;
    int result = add_tags(self, list, flags, kind);
    Py_DECREF(list);
    return result;
}

static int add_attr(Scanner *self, const char *name, Py_ssize_t len, uint32_t flags, int kind) {
    int slot = attr_slot(self, name, len, 1);
    if (slot < 0) {
        PyErr_Format(PyExc_ValueError, "bad attribute name %s", name);
        return -1;
    }
    self->attrs[slot].flags |= flags;
    if (kind) self->attrs[slot].kind = kind;
    return slot;
}

static int Scanner_init(Scanner *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"link_attributes", "keep_tags", "keep_attributes", "discard", NULL};
    PyObject *link_attributes, *keep_tags, *keep_attributes, *discard;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO", keywords, &PyDict_Type, &link_attributes, &keep_tags,
                                     &keep_attributes, &discard))
        return -1;
    for (int i = 0; i < TAG_SLOTS; i++) Py_CLEAR(self->tags[i].pyname);
    memset(self->tags, 0, sizeof self->tags);
    memset(self->attrs, 0, sizeof self->attrs);
    static const struct { const char *names; uint32_t flags; int kind; } builtin[] = {
        {"a", 0, K_A}, {"img", T_VOID, K_IMG}, {"base", T_VOID | T_HEAD, K_BASE}, {"meta", T_VOID | T_HEAD, K_META},
        {"title", T_RCDATA | T_HEAD | T_BLOCK, K_TITLE}, {"head", T_HEAD | T_BLOCK, K_HEAD}, {"body", T_BLOCK, K_BODY},
        {"frameset", T_BLOCK, 0}, {"html", T_HEAD | T_BLOCK, K_HTML}, {"area", T_VOID, K_AREA},
        {"svg", T_FOREIGN, 0}, {"math", T_FOREIGN, 0},
        {"script style", T_RAWTEXT | T_RAW_HIDDEN | T_HEAD | T_DISCARD, 0}, {"script", 0, K_SCRIPT},
        {"iframe", T_RAWTEXT | T_RAW_HIDDEN | T_BLOCK, 0},
        {"xmp noembed noframes", T_RAWTEXT | T_BLOCK | T_PRE, 0},
        {"textarea", T_RCDATA | T_BLOCK | T_PRE, 0},
        {"plaintext", T_PLAINTEXT | T_BLOCK | T_PRE, 0},
        {"pre listing", T_PRE | T_BLOCK, 0},
        {"link noscript template basefont bgsound", T_HEAD, 0},
        {"noscript", T_NOSCRIPT, 0},
        {"br col embed hr input keygen link param source track wbr frame", T_VOID, 0},
        {"address article aside blockquote br caption center dd details dialog dir div dl dt fieldset figcaption "
         "figure footer form frame h1 h2 h3 h4 h5 h6 header hgroup hr legend li main menu nav ol option p "
         "section select summary table tbody td tfoot th thead tr ul",
         T_BLOCK, 0},
        /* HTML Standard §13.2.6.5: these end <svg> and <math> content */
        {"b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing "
         "menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var",
         T_BREAKOUT, 0},
    };
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (add_builtin_tags(self, builtin[i].names, builtin[i].flags, builtin[i].kind) < 0) return -1;
    if (add_tags(self, keep_tags, T_KEEP, 0) < 0 || add_tags(self, discard, T_DISCARD, 0) < 0) return -1;
    static const struct { const char *name; int kind; } special[] = {
        {"href", AK_HREF}, {"alt", AK_ALT}, {"rel", AK_REL}, {"name", AK_NAME},
        {"content", AK_CONTENT}, {"charset", AK_CHARSET}, {"http-equiv", AK_HTTP_EQUIV},
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (add_attr(self, special[i].name, strlen(special[i].name), A_USED, special[i].kind) < 0) return -1;
    PyObject *iterator = PyObject_GetIter(keep_attributes), *item;
    if (iterator == NULL) return -1;
    while ((item = PyIter_Next(iterator)) != NULL) {
        Py_ssize_t len;
        const char *name = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &len) : NULL;
        int ok = name != NULL && add_attr(self, name, len, A_KEEP, 0) >= 0;
        if (name == NULL && !PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "bad attribute name %R", item);
        Py_DECREF(item);
        if (!ok) {
            Py_DECREF(iterator);
            return -1;
        }
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred()) return -1;
    PyObject *key, *value;
    Py_ssize_t position = 0;
    while (PyDict_Next(link_attributes, &position, &key, &value)) {
        PyObject *one = PyTuple_Pack(1, key);
        if (one == NULL || add_tags(self, one, T_LINK, 0) < 0) {
            Py_XDECREF(one);
            return -1;
        }
        Py_DECREF(one);
        Py_ssize_t len;
        const char *tag_name = PyUnicode_AsUTF8AndSize(key, &len);
        TagInfo *t = &self->tags[tag_slot(self, tag_name, len, 0)];
        PyObject *names = PySequence_Fast(value, "link attributes must be a sequence");
        if (names == NULL) return -1;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(names); i++) {
            PyObject *attr = PySequence_Fast_GET_ITEM(names, i);
            const char *name = PyUnicode_Check(attr) ? PyUnicode_AsUTF8AndSize(attr, &len) : NULL;
            int slot = name ? add_attr(self, name, len, A_USED, 0) : -1;
            if (slot < 0 || t->n_link_attrs == MAX_LINK_ATTRS) {
                if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "bad link attributes for %R", key);
                Py_DECREF(names);
                return -1;
            }
            t->link_attrs[t->n_link_attrs++] = slot;
        }
        Py_DECREF(names);
    }
    return 0;
}

static void Scanner_dealloc(Scanner *self) {
    for (int i = 0; i < TAG_SLOTS; i++) Py_CLEAR(self->tags[i].pyname);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Scanner_methods[] = {
    {"scan", (PyCFunction)Scanner_scan, METH_O,
     "scan(utf8: bytes) -> (document: bytes, text: str, title: str, base: str | None, "
     "links: list[(tag, value, text, nofollow)], metas: list[(name, content)])"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "wirescrapy.gatherer._scanner.Scanner",
    .tp_doc = "Scanner(link_attributes: dict[str, tuple[str, ...]], keep_tags, keep_attributes, discard)\n\n"
              "A configured one-pass HTML scanner; scan() is pure and releases nothing between calls.",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Scanner_init,
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_methods = Scanner_methods,
};

static struct PyModuleDef scanner_module = {
    PyModuleDef_HEAD_INIT, "_scanner", "The gatherer's one-pass HTML scanner (see _scanner.c).", -1, NULL,
};

PyMODINIT_FUNC PyInit__scanner(void) {
    if (PyType_Ready(&ScannerType) < 0) return NULL;
    PyObject *module = PyModule_Create(&scanner_module);
    if (module == NULL) return NULL;
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(module, "Scanner", (PyObject *)&ScannerType) < 0) {
        Py_DECREF(&ScannerType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
