/* dmlops's compiled launch path (see _fastlaunch.py, which builds this file on first use).
 *
 * Two things, both optional: dmlops runs the same without them, through CuPy's launch.
 *
 * Launch: a kernel launch whose arguments are packed once. Each call copies the packed
 * pointers into an argument array of its own, stores the pointers it is given there and calls
 * the driver's cuLaunchKernel (resolved once from the libcuda that CuPy loaded) on CuPy's
 * current stream, with the GIL released around the driver call only. Calls from several
 * threads never share a buffer, and one blocked in the driver (a full launch queue) does not
 * stop the others.
 *
 * replay(): a repeat call of dmlops.execute whose earlier call was recorded (the launches it
 * made, each pointer as an operand and a byte offset). It checks everything the full path
 * would (the same desc, backend, feature level and strict flag; dict arguments with exactly
 * the members; CuPy arrays of the recorded type, shape, dtype, strides, device and pointer
 * alignment; the launches still alive in their plan caches; the tuning globals unchanged)
 * and resolves every launch's pointers before it launches anything, and returns None at
 * the first difference: the caller then takes the full path, which so runs the call once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned shared, void *stream, void **params, void **extra);
typedef intptr_t (*stream_fn)(void);

#define CUDA_ERROR_INVALID_CONTEXT 201
#define MAX_POINTERS 64

static launch_fn cu_launch = NULL;
static stream_fn current_stream_c = NULL; /* CuPy's own C function, when its signature is the expected one */
static PyObject *current_stream_py = NULL; /* else a Python callable returning the stream handle */
static PyObject *ensure_context = NULL;    /* makes the current device's primary context current */
static PyObject *driver_error = NULL;      /* driver_error(status) -> the exception to raise */

/* recording: launches made by one thread are appended here as (launch, pointers, stream given) */
static PyObject *record_list = NULL;
static unsigned long record_thread = 0;

/* replay state, set by configure_replay() */
static PyObject *replays = NULL;       /* id(desc) -> entry tuple (see _fastlaunch.py) */
static PyObject *ndarray_type = NULL;  /* cupy.ndarray */
static PyObject *get_device_id = NULL; /* CuPy's current-device query */

static PyObject *s_shape, *s_strides, *s_dtype, *s_data, *s_ptr, *s_device_id, *s_stream;

/* -- Launch ------------------------------------------------------------------------------- */

/* What _arm packed. A call takes a reference (with the GIL held), copies the pointers into
 * buffers of its own and launches with the GIL released; a re-arm meanwhile swaps in a new
 * block and the old one is freed when its last call drops it. The counts change only with
 * the GIL held, so a plain integer does. */
typedef struct {
    Py_ssize_t refs;
    void *fn;
    unsigned grid[3];
    unsigned block[3];
    unsigned shared;
    int empty;
    Py_ssize_t n_pointers; /* pointers given per call */
    Py_ssize_t n_slots;    /* pointer slots: per-call, then fixed */
    Py_ssize_t n_args;     /* every kernel argument */
    uint64_t *last;        /* the per-call pointers last stored (a call may give fewer), then the fixed ones */
    void **structs;        /* n_args - n_slots addresses into blob */
    char *blob;            /* the by-value structs, each 16-byte aligned */
} Packed;

typedef struct {
    PyObject_HEAD
    Packed *packed; /* NULL until armed */
} LaunchObject;

static PyTypeObject LaunchType;

static void packed_release(Packed *p) {
    if (p == NULL || --p->refs > 0) return;
    PyMem_Free(p->last);
    PyMem_Free(p->structs);
    PyMem_Free(p->blob);
    PyMem_Free(p);
}

static PyObject *launch_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    (void)args;
    (void)kwds;
    LaunchObject *self = (LaunchObject *)type->tp_alloc(type, 0);
    return (PyObject *)self; /* tp_alloc zeroes the struct */
}

static void launch_dealloc(LaunchObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    if (tp->tp_flags & Py_TPFLAGS_HAVE_GC) PyObject_GC_UnTrack(self);
    packed_release(self->packed);
    self->packed = NULL;
    tp->tp_free((PyObject *)self); /* a subclass's own dealloc drops its type reference */
}

static int as_uint(PyObject *obj, unsigned *out, const char *what) {
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    if (v > 0xffffffffULL) {
        PyErr_Format(PyExc_ValueError, "%s %llu does not fit 32 bits", what, v);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

/* _arm(fn, grid(3), block(3), shared, n_pointers, fixed pointers, struct bytes) */
static PyObject *launch_arm(LaunchObject *self, PyObject *args) {
    PyObject *fn, *grid, *block, *fixed, *structs;
    PyObject *shared_obj;
    Py_ssize_t n_pointers;
    if (!PyArg_ParseTuple(args, "OO!O!OnO!O!", &fn, &PyTuple_Type, &grid, &PyTuple_Type, &block, &shared_obj,
                          &n_pointers, &PyTuple_Type, &fixed, &PyTuple_Type, &structs))
        return NULL;
    if (PyTuple_GET_SIZE(grid) != 3 || PyTuple_GET_SIZE(block) != 3) {
        PyErr_SetString(PyExc_ValueError, "grid and block are 3-tuples");
        return NULL;
    }
    if (n_pointers < 0 || n_pointers > MAX_POINTERS) {
        PyErr_Format(PyExc_ValueError, "0 to %d pointers per call; got %zd", MAX_POINTERS, n_pointers);
        return NULL;
    }
    void *handle = PyLong_AsVoidPtr(fn);
    if (handle == NULL && PyErr_Occurred()) return NULL;
    unsigned g[3], b[3], shared;
    for (int i = 0; i < 3; i++) {
        if (as_uint(PyTuple_GET_ITEM(grid, i), &g[i], "grid") < 0) return NULL;
        if (as_uint(PyTuple_GET_ITEM(block, i), &b[i], "block") < 0) return NULL;
    }
    if (as_uint(shared_obj, &shared, "shared memory") < 0) return NULL;
    Py_ssize_t n_fixed = PyTuple_GET_SIZE(fixed), n_structs = PyTuple_GET_SIZE(structs);
    Py_ssize_t n_slots = n_pointers + n_fixed, blob_size = 0;
    for (Py_ssize_t i = 0; i < n_structs; i++) {
        PyObject *s = PyTuple_GET_ITEM(structs, i);
        if (!PyBytes_Check(s)) {
            PyErr_SetString(PyExc_TypeError, "structs are bytes");
            return NULL;
        }
        blob_size += (PyBytes_GET_SIZE(s) + 15) & ~(Py_ssize_t)15;
    }
    Packed *p = PyMem_Calloc(1, sizeof(Packed));
    if (p == NULL) return PyErr_NoMemory();
    p->refs = 1;
    p->last = PyMem_Calloc((size_t)(n_slots + 1), sizeof(uint64_t));
    p->structs = PyMem_Calloc((size_t)(n_structs + 1), sizeof(void *));
    p->blob = PyMem_Calloc((size_t)(blob_size + 16), 1);
    if (!p->last || !p->structs || !p->blob) {
        packed_release(p);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n_fixed; i++) {
        unsigned long long v = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(fixed, i));
        if (v == (unsigned long long)-1 && PyErr_Occurred()) {
            packed_release(p);
            return NULL;
        }
        p->last[n_pointers + i] = v;
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n_structs; i++) {
        PyObject *s = PyTuple_GET_ITEM(structs, i);
        memcpy(p->blob + at, PyBytes_AS_STRING(s), (size_t)PyBytes_GET_SIZE(s));
        p->structs[i] = p->blob + at;
        at += (PyBytes_GET_SIZE(s) + 15) & ~(Py_ssize_t)15;
    }
    p->fn = handle;
    memcpy(p->grid, g, sizeof g);
    memcpy(p->block, b, sizeof b);
    p->shared = shared;
    p->empty = g[0] == 0 || g[1] == 0 || g[2] == 0;
    p->n_pointers = n_pointers;
    p->n_slots = n_slots;
    p->n_args = n_slots + n_structs;
    Packed *old = self->packed;
    self->packed = p;
    packed_release(old); /* a call still launching with it keeps it until it returns */
    Py_RETURN_NONE;
}

static int current_stream(void **out) {
    if (current_stream_c != NULL) {
        *out = (void *)current_stream_c();
        return PyErr_Occurred() ? -1 : 0; /* CuPy's function may have raised (no device, say) */
    }
    if (current_stream_py == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dmlops fast launch: not initialised");
        return -1;
    }
    PyObject *r = PyObject_CallNoArgs(current_stream_py);
    if (r == NULL) return -1;
    *out = PyLong_AsVoidPtr(r);
    Py_DECREF(r);
    return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

static int raise_status(int status) {
    if (driver_error != NULL) {
        PyObject *exc = PyObject_CallFunction(driver_error, "i", status);
        if (exc != NULL) {
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
        }
        return -1;
    }
    PyErr_Format(PyExc_RuntimeError, "cuLaunchKernel failed: CUresult %d", status);
    return -1;
}

static int not_initialised(void) {
    PyErr_SetString(PyExc_RuntimeError, "dmlops fast launch: not initialised (init() was not called)");
    return -1;
}

#define LOCAL_SLOTS 32
#define LOCAL_ARGS 48

/* Launch p with these n per-call pointers on the stream (stream_given 0: CuPy's current one).
 * The slots and the argument array are this call's own (on the stack, or PyMem above a small
 * size), so the GIL is released around cuLaunchKernel: a full launch queue then blocks only
 * this thread, and a host callback on the stream can take the GIL. The driver has copied the
 * arguments when the call returns. The caller holds the GIL and a reference to p. */
static int launch_go(Packed *p, void *stream, int stream_given, const uint64_t *pointers, Py_ssize_t n) {
    if (p->empty) return 0;
    if (cu_launch == NULL) return not_initialised();
    if (!stream_given && current_stream(&stream) < 0) return -1;
    /* the slots a call does not give keep the last stored pointers, as PackedLaunch's do */
    memcpy(p->last, pointers, (size_t)n * sizeof(uint64_t));
    uint64_t slot_buf[LOCAL_SLOTS];
    void *argv_buf[LOCAL_ARGS];
    uint64_t *slots = slot_buf;
    void **argv = argv_buf;
    if (p->n_slots > LOCAL_SLOTS) slots = PyMem_Malloc((size_t)p->n_slots * sizeof(uint64_t));
    if (p->n_args > LOCAL_ARGS) argv = PyMem_Malloc((size_t)p->n_args * sizeof(void *));
    int rc = -1;
    if (slots == NULL || argv == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(slots, p->last, (size_t)p->n_slots * sizeof(uint64_t));
    for (Py_ssize_t i = 0; i < p->n_slots; i++) argv[i] = &slots[i];
    memcpy(argv + p->n_slots, p->structs, (size_t)(p->n_args - p->n_slots) * sizeof(void *));
    for (int attempt = 0;; attempt++) {
        int status;
        Py_BEGIN_ALLOW_THREADS
        status = cu_launch(p->fn, p->grid[0], p->grid[1], p->grid[2], p->block[0], p->block[1], p->block[2],
                           p->shared, stream, argv, NULL);
        Py_END_ALLOW_THREADS
        if (status == 0) {
            rc = 0;
            break;
        }
        if (status == CUDA_ERROR_INVALID_CONTEXT && attempt == 0 && ensure_context != NULL) {
            /* a thread that never made a runtime call has no current context yet */
            PyObject *r = PyObject_CallNoArgs(ensure_context);
            if (r == NULL) break;
            Py_DECREF(r);
            continue;
        }
        raise_status(status);
        break;
    }
done:
    if (slots != slot_buf) PyMem_Free(slots);
    if (argv != argv_buf) PyMem_Free(argv);
    return rc;
}

static int record(PyObject *self, PyObject *const *args, Py_ssize_t nargs, int stream_given) {
    PyObject *ptrs = PyTuple_New(nargs);
    if (ptrs == NULL) return -1;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(ptrs, i, args[i]);
    }
    PyObject *item = Py_BuildValue("(ONO)", self, ptrs, stream_given ? Py_True : Py_False);
    if (item == NULL) return -1;
    int rc = PyList_Append(record_list, item);
    Py_DECREF(item);
    return rc;
}

static PyObject *launch_call_impl(LaunchObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *stream_obj) {
    if (self->packed == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "this launch was never armed");
        return NULL;
    }
    if (cu_launch == NULL) {
        not_initialised();
        return NULL;
    }
    if (nargs > self->packed->n_pointers) {
        PyErr_Format(PyExc_TypeError, "this launch takes at most %zd pointers; got %zd", self->packed->n_pointers,
                     nargs);
        return NULL;
    }
    uint64_t pointers[MAX_POINTERS];
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (!PyLong_Check(args[i])) {
            PyErr_Format(PyExc_TypeError, "pointers are ints; got %.100s", Py_TYPE(args[i])->tp_name);
            return NULL;
        }
        pointers[i] = PyLong_AsUnsignedLongLongMask(args[i]);
        if (pointers[i] == (uint64_t)-1 && PyErr_Occurred()) return NULL;
    }
    void *stream = NULL;
    int stream_given = stream_obj != NULL && stream_obj != Py_None;
    if (stream_given) {
        stream = PyLong_AsVoidPtr(stream_obj);
        if (stream == NULL && PyErr_Occurred()) return NULL;
    }
    if (record_list != NULL && PyThread_get_thread_ident() == record_thread) {
        if (record((PyObject *)self, args, nargs, stream_given) < 0) return NULL;
    }
    /* Python code may run before the launch (the stream query): hold this packing meanwhile */
    Packed *p = self->packed;
    p->refs++;
    int rc = launch_go(p, stream, stream_given, pointers, nargs);
    packed_release(p);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *launch_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *stream = NULL;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0) {
        stream = PyDict_GetItemWithError(kwargs, s_stream);
        if (stream == NULL && PyErr_Occurred()) return NULL;
        if (PyDict_GET_SIZE(kwargs) != (stream != NULL ? 1 : 0)) {
            PyErr_SetString(PyExc_TypeError, "a launch takes pointers and stream= only");
            return NULL;
        }
    }
    return launch_call_impl((LaunchObject *)self, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), stream);
}

static PyObject *launch_get_n_pointers(LaunchObject *self, void *closure) {
    (void)closure;
    return PyLong_FromSsize_t(self->packed ? self->packed->n_pointers : 0);
}

static PyObject *launch_get_armed(LaunchObject *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->packed != NULL);
}

static PyObject *launch_get_pointers(LaunchObject *self, void *closure) {
    (void)closure;
    Py_ssize_t n = self->packed ? self->packed->n_slots : 0;
    PyObject *out = PyTuple_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(self->packed->last[i]);
        if (v == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, v);
    }
    return out;
}

static PyMethodDef launch_methods[] = {
    {"_arm", (PyCFunction)launch_arm, METH_VARARGS,
     "_arm(fn, grid, block, shared, n_pointers, fixed, structs): pack the arguments once."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef launch_getset[] = {
    {"n_pointers", (getter)launch_get_n_pointers, NULL, "pointers given per call", NULL},
    {"armed", (getter)launch_get_armed, NULL, "whether _arm packed the arguments", NULL},
    {"_pointers", (getter)launch_get_pointers, NULL, "the pointer slots (the last call's, then the fixed ones)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LaunchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_dmlops_fastlaunch.Launch",
    .tp_basicsize = sizeof(LaunchObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A kernel launch whose arguments are packed once (call it with the per-call pointers).",
    .tp_new = launch_new,
    .tp_dealloc = (destructor)launch_dealloc,
    .tp_call = launch_call,
    .tp_methods = launch_methods,
    .tp_getset = launch_getset,
};

/* -- replay ------------------------------------------------------------------------------- */

/* 1 when obj is a CuPy array matching spec = (member, shape, dtype, strides, alignment), with
 * its pointer in *ptr; 0 when not (no error set); -1 on an error. */
static int operand_matches(PyObject *obj, PyObject *spec, long device, uint64_t *ptr) {
    if ((PyObject *)Py_TYPE(obj) != ndarray_type) return 0;
    int ok = 0;
    PyObject *shape = NULL, *strides = NULL, *dtype = NULL, *data = NULL, *p = NULL, *dev = NULL;
    shape = PyObject_GetAttr(obj, s_shape);
    if (shape == NULL) goto fail;
    int eq = PyObject_RichCompareBool(shape, PyTuple_GET_ITEM(spec, 1), Py_EQ);
    if (eq <= 0) goto done_eq;
    dtype = PyObject_GetAttr(obj, s_dtype);
    if (dtype == NULL) goto fail;
    eq = PyObject_RichCompareBool(dtype, PyTuple_GET_ITEM(spec, 2), Py_EQ); /* identity first */
    if (eq <= 0) goto done_eq;
    strides = PyObject_GetAttr(obj, s_strides);
    if (strides == NULL) goto fail;
    eq = PyObject_RichCompareBool(strides, PyTuple_GET_ITEM(spec, 3), Py_EQ);
    if (eq <= 0) goto done_eq;
    data = PyObject_GetAttr(obj, s_data);
    if (data == NULL) goto fail;
    dev = PyObject_GetAttr(data, s_device_id);
    if (dev == NULL) goto fail;
    long d = PyLong_AsLong(dev);
    if (d == -1 && PyErr_Occurred()) goto fail;
    if (d != device) goto done;
    p = PyObject_GetAttr(data, s_ptr);
    if (p == NULL) goto fail;
    *ptr = PyLong_AsUnsignedLongLongMask(p);
    if (*ptr == (uint64_t)-1 && PyErr_Occurred()) goto fail;
    long align = PyLong_AsLong(PyTuple_GET_ITEM(spec, 4));
    if (align == -1 && PyErr_Occurred()) goto fail;
    ok = (long)(*ptr & 255) == align;
    goto done;
done_eq:
    if (eq < 0) goto fail;
done:
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(dtype);
    Py_XDECREF(data);
    Py_XDECREF(p);
    Py_XDECREF(dev);
    return ok;
fail:
    ok = -1;
    goto done;
}

#define MAX_OPERANDS 16
#define MAX_STEPS 8

/* replay(desc, inputs, outputs, backend, feature_level, strict) -> result dict or None.
 *
 * entry = (desc, backend, feature_level, strict, device, in_specs, out_specs, steps, guards)
 * specs: ((member, shape, dtype, strides, alignment), ...); steps: ((weakref to a Launch,
 * ((operand, byte offset), ...)), ...); guards: ((dict, key, value), ...), each value
 * checked by identity. Operands are the inputs, then the outputs, in spec order. */
static PyObject *replay(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "replay takes 6 arguments");
        return NULL;
    }
    PyObject *desc = args[0], *inputs = args[1], *outputs = args[2], *backend = args[3], *level = args[4],
             *strict = args[5];
    if (replays == NULL || !PyDict_CheckExact(inputs)) Py_RETURN_NONE;
    if (outputs != Py_None && !PyDict_CheckExact(outputs)) Py_RETURN_NONE;
    PyObject *key = PyLong_FromVoidPtr(desc);
    if (key == NULL) return NULL;
    PyObject *entry = PyDict_GetItemWithError(replays, key); /* borrowed */
    Py_DECREF(key);
    if (entry == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    Py_INCREF(entry); /* the dict may change while Python code runs below */
    /* held: every operand (a reference of our own: the caller's dicts may change while Python
     * code runs below, from an attribute read, an allocation or another thread); launches and
     * packs: each step's Launch and the packing it is launched with, held until the end */
    PyObject *result = NULL, *held[MAX_OPERANDS] = {NULL}, *launches[MAX_STEPS] = {NULL};
    Packed *packs[MAX_STEPS] = {NULL};
    Py_ssize_t n_held = 0;
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 9) goto miss;
    if (PyTuple_GET_ITEM(entry, 0) != desc || PyTuple_GET_ITEM(entry, 3) != strict) goto miss;
    PyObject *want_backend = PyTuple_GET_ITEM(entry, 1);
    if (backend != want_backend) {
        if (!PyUnicode_CheckExact(backend) || PyUnicode_Compare(backend, want_backend) != 0) {
            if (PyErr_Occurred()) PyErr_Clear();
            goto miss;
        }
    }
    PyObject *want_level = PyTuple_GET_ITEM(entry, 2);
    if (level != want_level) {
        if (level == Py_None || want_level == Py_None) goto miss;
        int eq = PyObject_RichCompareBool(level, want_level, Py_EQ);
        if (eq < 0) PyErr_Clear();
        if (eq != 1) goto miss;
    }
    PyObject *guards = PyTuple_GET_ITEM(entry, 8);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(guards); i++) {
        PyObject *g = PyTuple_GET_ITEM(guards, i);
        if (!PyTuple_CheckExact(g) || PyTuple_GET_SIZE(g) != 3 || !PyDict_Check(PyTuple_GET_ITEM(g, 0))) goto miss;
        PyObject *now = PyDict_GetItemWithError(PyTuple_GET_ITEM(g, 0), PyTuple_GET_ITEM(g, 1));
        if (now == NULL && PyErr_Occurred()) goto error;
        if (now != PyTuple_GET_ITEM(g, 2)) goto miss;
    }
    long device = PyLong_AsLong(PyTuple_GET_ITEM(entry, 4));
    if (device == -1 && PyErr_Occurred()) goto error;
    {
        PyObject *cur = PyObject_CallNoArgs(get_device_id);
        if (cur == NULL) goto error;
        long d = PyLong_AsLong(cur);
        Py_DECREF(cur);
        if (d == -1 && PyErr_Occurred()) goto error;
        if (d != device) goto miss;
    }
    PyObject *in_specs = PyTuple_GET_ITEM(entry, 5), *out_specs = PyTuple_GET_ITEM(entry, 6);
    Py_ssize_t n_in = PyTuple_GET_SIZE(in_specs), n_out = PyTuple_GET_SIZE(out_specs);
    if (n_in + n_out > MAX_OPERANDS || PyDict_GET_SIZE(inputs) != n_in) goto miss;
    uint64_t ptrs[MAX_OPERANDS];
    for (Py_ssize_t i = 0; i < n_in; i++) {
        PyObject *spec = PyTuple_GET_ITEM(in_specs, i);
        PyObject *obj = PyDict_GetItemWithError(inputs, PyTuple_GET_ITEM(spec, 0));
        if (obj == NULL) {
            if (PyErr_Occurred()) goto error;
            goto miss;
        }
        held[n_held++] = Py_NewRef(obj);
        int m = operand_matches(obj, spec, device, &ptrs[i]);
        if (m < 0) goto error;
        if (m == 0) goto miss;
    }
    Py_ssize_t given = 0;
    for (Py_ssize_t j = 0; j < n_out; j++) {
        PyObject *spec = PyTuple_GET_ITEM(out_specs, j);
        PyObject *obj = NULL;
        if (outputs != Py_None) {
            obj = PyDict_GetItemWithError(outputs, PyTuple_GET_ITEM(spec, 0));
            if (obj == NULL && PyErr_Occurred()) goto error;
            if (obj != NULL) given++;
        }
        if (obj == NULL || obj == Py_None) {
            /* a missing output is allocated, as the full path does, then checked like a given one */
            obj = PyObject_CallFunctionObjArgs(ndarray_type, PyTuple_GET_ITEM(spec, 1), PyTuple_GET_ITEM(spec, 2), NULL);
            if (obj == NULL) goto error;
            held[n_held++] = obj;
        } else {
            held[n_held++] = Py_NewRef(obj);
        }
        int m = operand_matches(obj, spec, device, &ptrs[n_in + j]);
        if (m < 0) goto error;
        if (m == 0) goto miss;
    }
    if (outputs != Py_None && PyDict_GET_SIZE(outputs) != given) goto miss; /* unknown members */
    /* Resolve every step before launching any: a step that cannot launch (its plan dropped, a
     * mapping that does not fit its launch) returns None with nothing launched, so the full
     * path that the caller then takes runs the call once (an in-place call run twice would not
     * be the same call). */
    PyObject *steps = PyTuple_GET_ITEM(entry, 7);
    if (!PyTuple_CheckExact(steps)) goto miss;
    Py_ssize_t n_steps = PyTuple_GET_SIZE(steps);
    if (n_steps > MAX_STEPS) goto miss;
    uint64_t pointers[MAX_STEPS][MAX_POINTERS];
    Py_ssize_t counts[MAX_STEPS];
    for (Py_ssize_t s = 0; s < n_steps; s++) {
        PyObject *step = PyTuple_GET_ITEM(steps, s);
        if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 2) goto miss;
        PyObject *ref = PyTuple_GET_ITEM(step, 0), *map = PyTuple_GET_ITEM(step, 1);
        if (!PyWeakref_CheckRef(ref) || !PyTuple_CheckExact(map)) goto miss;
#if PY_VERSION_HEX >= 0x030D0000
        PyObject *launch = NULL;
        if (PyWeakref_GetRef(ref, &launch) < 0) goto error;
        if (launch == NULL) goto miss; /* its plan was dropped from the cache */
#else
        PyObject *launch = PyWeakref_GetObject(ref);
        if (launch == NULL) goto error;
        if (launch == Py_None) goto miss; /* its plan was dropped from the cache */
        Py_INCREF(launch);
#endif
        launches[s] = launch;
        if (!PyObject_TypeCheck(launch, &LaunchType) || ((LaunchObject *)launch)->packed == NULL) goto miss;
        Packed *p = ((LaunchObject *)launch)->packed;
        p->refs++;
        packs[s] = p;
        Py_ssize_t n = PyTuple_GET_SIZE(map);
        if (n > p->n_pointers) goto miss; /* recorded from another packing of this launch */
        counts[s] = n;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *pair = PyTuple_GET_ITEM(map, k);
            if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) goto miss;
            Py_ssize_t operand = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0));
            long long offset = PyLong_AsLongLong(PyTuple_GET_ITEM(pair, 1));
            if (PyErr_Occurred()) {
                PyErr_Clear(); /* not an entry _fastlaunch.py made: no replay */
                goto miss;
            }
            if (operand < 0 || operand >= n_in + n_out) goto miss;
            pointers[s][k] = ptrs[operand] + (uint64_t)offset;
        }
    }
    /* every check passed: launch, in the recorded order, on the stream read once. A driver
     * error from here on raises (a later step may then not have run); it never returns None,
     * which would run the call again. */
    void *stream = NULL;
    if (n_steps > 0) {
        if (cu_launch == NULL) goto miss;
        if (current_stream(&stream) < 0) goto error;
    }
    for (Py_ssize_t s = 0; s < n_steps; s++) {
        if (launch_go(packs[s], stream, 1, pointers[s], counts[s]) < 0) goto error;
    }
    result = PyDict_New();
    if (result == NULL) goto error;
    for (Py_ssize_t j = 0; j < n_out; j++) {
        if (PyDict_SetItem(result, PyTuple_GET_ITEM(PyTuple_GET_ITEM(out_specs, j), 0), held[n_in + j]) < 0) {
            Py_CLEAR(result);
            goto error;
        }
    }
    goto finish;
miss:
    result = Py_None;
    Py_INCREF(result);
    goto finish;
error:
    result = NULL;
finish:
    for (Py_ssize_t i = 0; i < n_held; i++) Py_DECREF(held[i]);
    for (int s = 0; s < MAX_STEPS; s++) {
        packed_release(packs[s]);
        Py_XDECREF(launches[s]);
    }
    Py_DECREF(entry);
    return result;
}

/* -- module functions --------------------------------------------------------------------- */

static PyObject *init(PyObject *module, PyObject *args) {
    (void)module;
    const char *library;
    PyObject *stream, *ensure, *error;
    if (!PyArg_ParseTuple(args, "sOOO", &library, &stream, &ensure, &error)) return NULL;
    void *lib = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL) lib = dlopen(library, RTLD_NOW);
    if (lib == NULL) {
        PyErr_Format(PyExc_OSError, "dlopen(%s) failed: %s", library, dlerror());
        return NULL;
    }
    void *sym = dlsym(lib, "cuLaunchKernel");
    if (sym == NULL) {
        PyErr_Format(PyExc_OSError, "%s has no cuLaunchKernel", library);
        return NULL;
    }
    /* CuPy's current-stream function, through its Cython C API capsule, only when the
     * capsule says the signature is the one called here; else the Python callable */
    stream_fn c_stream = NULL;
    if (PyCapsule_CheckExact(stream)) {
        const char *name = PyCapsule_GetName(stream);
        if (name != NULL && strcmp(name, "intptr_t (void)") == 0) c_stream = (stream_fn)PyCapsule_GetPointer(stream, name);
        if (c_stream == NULL) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "unexpected stream capsule %s", name ? name : "(unnamed)");
            return NULL;
        }
    } else if (!PyCallable_Check(stream)) {
        PyErr_SetString(PyExc_TypeError, "stream: a capsule or a callable");
        return NULL;
    }
    cu_launch = (launch_fn)sym;
    current_stream_c = c_stream;
    Py_XSETREF(current_stream_py, c_stream ? NULL : Py_NewRef(stream));
    Py_XSETREF(ensure_context, Py_NewRef(ensure));
    Py_XSETREF(driver_error, Py_NewRef(error));
    return PyBool_FromLong(c_stream != NULL);
}

static PyObject *configure_replay(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *table, *ndarray, *device;
    if (!PyArg_ParseTuple(args, "O!OO", &PyDict_Type, &table, &ndarray, &device)) return NULL;
    Py_XSETREF(replays, Py_NewRef(table));
    Py_XSETREF(ndarray_type, Py_NewRef(ndarray));
    Py_XSETREF(get_device_id, Py_NewRef(device));
    Py_RETURN_NONE;
}

static PyObject *start_recording(PyObject *module, PyObject *arg) {
    (void)module;
    if (!PyList_CheckExact(arg)) {
        PyErr_SetString(PyExc_TypeError, "a list");
        return NULL;
    }
    if (record_list != NULL) Py_RETURN_FALSE; /* another recording is on (nested, or another thread) */
    record_list = Py_NewRef(arg);
    record_thread = PyThread_get_thread_ident();
    Py_RETURN_TRUE;
}

static PyObject *stop_recording(PyObject *module, PyObject *arg) {
    (void)module;
    if (record_list == arg) {
        Py_CLEAR(record_list);
        record_thread = 0;
    }
    Py_RETURN_NONE;
}

static PyObject *current_stream_handle(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    void *stream = NULL;
    if (current_stream(&stream) < 0) return NULL;
    return PyLong_FromVoidPtr(stream);
}

static PyMethodDef module_methods[] = {
    {"init", init, METH_VARARGS,
     "init(libcuda, stream, ensure_context, driver_error): resolve cuLaunchKernel; True when the stream is "
     "read through CuPy's C function."},
    {"configure_replay", configure_replay, METH_VARARGS, "configure_replay(entries, ndarray, get_device_id)"},
    {"replay", (PyCFunction)(void (*)(void))replay, METH_FASTCALL,
     "replay(desc, inputs, outputs, backend, feature_level, strict): the result dict, or None."},
    {"start_recording", start_recording, METH_O, "record this thread's launches into the list (False if busy)"},
    {"stop_recording", stop_recording, METH_O, "stop recording into the list"},
    {"current_stream", current_stream_handle, METH_NOARGS, "CuPy's current stream handle, as launches read it"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_dmlops_fastlaunch", "dmlops's compiled launch path (see dmlops.cuda._fastlaunch).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__dmlops_fastlaunch(void) {
    if (PyType_Ready(&LaunchType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    s_shape = PyUnicode_InternFromString("shape");
    s_strides = PyUnicode_InternFromString("strides");
    s_dtype = PyUnicode_InternFromString("dtype");
    s_data = PyUnicode_InternFromString("data");
    s_ptr = PyUnicode_InternFromString("ptr");
    s_device_id = PyUnicode_InternFromString("device_id");
    s_stream = PyUnicode_InternFromString("stream");
    if (!s_shape || !s_strides || !s_dtype || !s_data || !s_ptr || !s_device_id || !s_stream) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&LaunchType);
    if (PyModule_AddObject(m, "Launch", (PyObject *)&LaunchType) < 0) {
        Py_DECREF(&LaunchType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
