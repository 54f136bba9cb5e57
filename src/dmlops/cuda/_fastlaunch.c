/* dmlops's compiled launch path (see _fastlaunch.py, which builds this file on first use).
 *
 * Two things, both optional: dmlops runs the same without them, through CuPy's launch.
 *
 * Launch: a kernel launch whose arguments are packed once. Each call stores the pointers it
 * is given into their slots and calls the driver's cuLaunchKernel (resolved once from the
 * libcuda that CuPy loaded) on CuPy's current stream. The GIL is held from the stores to
 * the launch (the driver copies the arguments during the call), so calls from several
 * threads never mix their pointers, with no lock.
 *
 * replay(): a repeat call of dmlops.execute whose earlier call was recorded (the launches it
 * made, each pointer as an operand and a byte offset). It checks everything the full path
 * would (the same desc, backend, feature level and strict flag; dict arguments with exactly
 * the members; CuPy arrays of the recorded type, shape, dtype, strides, device and pointer
 * alignment; the launches still alive in their plan caches; the tuning globals unchanged)
 * before it launches anything, and returns None at the first difference: the caller then
 * takes the full path.
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

typedef struct {
    PyObject_HEAD
    void *fn;
    unsigned grid[3];
    unsigned block[3];
    unsigned shared;
    int armed;
    int empty;
    Py_ssize_t n_pointers; /* pointers given per call */
    Py_ssize_t n_slots;    /* pointer slots: per-call, then fixed */
    Py_ssize_t n_args;     /* every kernel argument */
    void **argv;
    uint64_t *slots; /* n_pointers per-call slots, then the fixed pointers */
    char *blob;      /* the by-value structs, each 16-byte aligned */
} LaunchObject;

static PyTypeObject LaunchType;

static void launch_free_buffers(LaunchObject *self) {
    PyMem_Free(self->argv);
    PyMem_Free(self->slots);
    PyMem_Free(self->blob);
    self->argv = NULL;
    self->slots = NULL;
    self->blob = NULL;
    self->armed = 0;
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
    launch_free_buffers(self);
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
    void **argv = PyMem_Calloc((size_t)(n_slots + n_structs + 1), sizeof(void *));
    uint64_t *slots = PyMem_Calloc((size_t)(n_slots + 1), sizeof(uint64_t));
    char *blob = PyMem_Calloc((size_t)(blob_size + 16), 1);
    if (!argv || !slots || !blob) {
        PyMem_Free(argv);
        PyMem_Free(slots);
        PyMem_Free(blob);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n_fixed; i++) {
        unsigned long long v = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(fixed, i));
        if (v == (unsigned long long)-1 && PyErr_Occurred()) {
            PyMem_Free(argv);
            PyMem_Free(slots);
            PyMem_Free(blob);
            return NULL;
        }
        slots[n_pointers + i] = v;
    }
    for (Py_ssize_t i = 0; i < n_slots; i++) argv[i] = &slots[i];
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n_structs; i++) {
        PyObject *s = PyTuple_GET_ITEM(structs, i);
        memcpy(blob + at, PyBytes_AS_STRING(s), (size_t)PyBytes_GET_SIZE(s));
        argv[n_slots + i] = blob + at;
        at += (PyBytes_GET_SIZE(s) + 15) & ~(Py_ssize_t)15;
    }
    launch_free_buffers(self);
    self->fn = handle;
    memcpy(self->grid, g, sizeof g);
    memcpy(self->block, b, sizeof b);
    self->shared = shared;
    self->empty = g[0] == 0 || g[1] == 0 || g[2] == 0;
    self->n_pointers = n_pointers;
    self->n_slots = n_slots;
    self->n_args = n_slots + n_structs;
    self->argv = argv;
    self->slots = slots;
    self->blob = blob;
    self->armed = 1;
    Py_RETURN_NONE;
}

static int current_stream(void **out) {
    if (current_stream_c != NULL) {
        *out = (void *)current_stream_c();
        return 0;
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

/* The launch itself, with the pointer slots already stored; stream NULL: CuPy's current one. */
static int launch_go(LaunchObject *self, void *stream, int stream_given, const uint64_t *pointers, Py_ssize_t n) {
    if (self->empty) return 0;
    if (!stream_given && current_stream(&stream) < 0) return -1;
    for (int attempt = 0;; attempt++) {
        memcpy(self->slots, pointers, (size_t)n * sizeof(uint64_t));
        int status = cu_launch(self->fn, self->grid[0], self->grid[1], self->grid[2], self->block[0], self->block[1],
                               self->block[2], self->shared, stream, self->argv, NULL);
        if (status == 0) return 0;
        if (status == CUDA_ERROR_INVALID_CONTEXT && attempt == 0 && ensure_context != NULL) {
            /* a thread that never made a runtime call has no current context yet */
            PyObject *r = PyObject_CallNoArgs(ensure_context);
            if (r == NULL) return -1;
            Py_DECREF(r);
            continue;
        }
        return raise_status(status);
    }
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
    if (!self->armed) {
        PyErr_SetString(PyExc_RuntimeError, "this launch was never armed");
        return NULL;
    }
    if (nargs > self->n_pointers) {
        PyErr_Format(PyExc_TypeError, "this launch takes at most %zd pointers; got %zd", self->n_pointers, nargs);
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
    if (launch_go(self, stream, stream_given, pointers, nargs) < 0) return NULL;
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
    return PyLong_FromSsize_t(self->n_pointers);
}

static PyObject *launch_get_armed(LaunchObject *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->armed);
}

static PyObject *launch_get_pointers(LaunchObject *self, void *closure) {
    (void)closure;
    Py_ssize_t n = self->armed ? self->n_slots : 0;
    PyObject *out = PyTuple_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(self->slots[i]);
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
    {"_pointers", (getter)launch_get_pointers, NULL, "the pointer slots (per-call, then fixed), as stored", NULL},
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
    PyObject *result = NULL, *allocated[MAX_OPERANDS] = {NULL};
    PyObject *launches[MAX_STEPS] = {NULL};
    int n_alloc = 0;
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
    PyObject *arrays[MAX_OPERANDS]; /* borrowed, or in allocated[] */
    for (Py_ssize_t i = 0; i < n_in; i++) {
        PyObject *spec = PyTuple_GET_ITEM(in_specs, i);
        PyObject *obj = PyDict_GetItemWithError(inputs, PyTuple_GET_ITEM(spec, 0));
        if (obj == NULL) {
            if (PyErr_Occurred()) goto error;
            goto miss;
        }
        int m = operand_matches(obj, spec, device, &ptrs[i]);
        if (m < 0) goto error;
        if (m == 0) goto miss;
        arrays[i] = obj;
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
            allocated[n_alloc++] = obj;
        }
        int m = operand_matches(obj, spec, device, &ptrs[n_in + j]);
        if (m < 0) goto error;
        if (m == 0) goto miss;
        arrays[n_in + j] = obj;
    }
    if (outputs != Py_None && PyDict_GET_SIZE(outputs) != given) goto miss; /* unknown members */
    PyObject *steps = PyTuple_GET_ITEM(entry, 7);
    Py_ssize_t n_steps = PyTuple_GET_SIZE(steps);
    if (n_steps > MAX_STEPS) goto miss;
    for (Py_ssize_t s = 0; s < n_steps; s++) {
        PyObject *ref = PyTuple_GET_ITEM(PyTuple_GET_ITEM(steps, s), 0);
#if PY_VERSION_HEX >= 0x030D0000
        PyObject *launch = NULL;
        if (PyWeakref_GetRef(ref, &launch) < 0) goto error;
        if (launch == NULL) goto miss;
#else
        PyObject *launch = PyWeakref_GetObject(ref);
        if (launch == NULL) goto error;
        if (launch == Py_None) goto miss; /* its plan was dropped from the cache */
        Py_INCREF(launch);
#endif
        launches[s] = launch;
        if (!PyObject_TypeCheck(launch, &LaunchType) || !((LaunchObject *)launch)->armed) goto miss;
    }
    /* every check passed: launch, in the recorded order */
    for (Py_ssize_t s = 0; s < n_steps; s++) {
        LaunchObject *launch = (LaunchObject *)launches[s];
        PyObject *map = PyTuple_GET_ITEM(PyTuple_GET_ITEM(steps, s), 1);
        Py_ssize_t n = PyTuple_GET_SIZE(map);
        uint64_t pointers[MAX_POINTERS];
        if (n > launch->n_pointers) goto miss; /* cannot happen: recorded from this launch */
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *pair = PyTuple_GET_ITEM(map, k);
            Py_ssize_t operand = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0));
            long long offset = PyLong_AsLongLong(PyTuple_GET_ITEM(pair, 1));
            if (PyErr_Occurred()) goto error;
            pointers[k] = ptrs[operand] + (uint64_t)offset;
        }
        if (launch_go(launch, NULL, 0, pointers, n) < 0) goto error;
    }
    result = PyDict_New();
    if (result == NULL) goto error;
    for (Py_ssize_t j = 0; j < n_out; j++) {
        if (PyDict_SetItem(result, PyTuple_GET_ITEM(PyTuple_GET_ITEM(out_specs, j), 0), arrays[n_in + j]) < 0) {
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
    for (int i = 0; i < n_alloc; i++) Py_DECREF(allocated[i]);
    for (int s = 0; s < MAX_STEPS; s++) Py_XDECREF(launches[s]);
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
