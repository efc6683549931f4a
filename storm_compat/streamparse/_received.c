/* The C build of storm_compat/streamparse/_received.py: the pystorm Tuples of a run of inputs.
 *
 * The .py file is the reference and the fallback (HERON_PURE_PYTHON=1, no compiler, or this
 * file edited since the build: see heron_core/_compiled.py); tests/streamparse/
 * test_sparse_received.py checks that both builds give the same tuples. This one exists because
 * Python has no cheap way to build an instance of a tuple subclass (a namedtuple): tuple.__new__
 * makes an argument tuple, its slice and a copy of the row before the object itself, about
 * 110 ns a tuple where this allocates the object and fills it (as CPython's tuple_subtype_new
 * does after its copy), and it writes the decimal id without a format string.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* A new instance of the tuple subclass `type` holding the n objects of `items`. */
static PyObject *
filled(PyTypeObject *type, PyObject *const *items, Py_ssize_t n)
{
    PyObject *obj = type->tp_alloc(type, n);
    if (obj == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(items[i]);
        PyTuple_SET_ITEM(obj, i, items[i]);
    }
    return obj;
}

/* str(number) for the int `number`. */
static PyObject *
decimal(PyObject *number)
{
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(number, &overflow);
    if (overflow || (value == -1 && PyErr_Occurred()))
        return PyErr_Occurred() ? NULL : PyObject_Str(number);
    char digits[24];
    Py_ssize_t n = 0;
    unsigned long long rest = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + rest % 10);
        rest /= 10;
    } while (rest);
    if (value < 0)
        digits[sizeof digits - 1 - n++] = '-';
    PyObject *text = PyUnicode_New(n, 127);
    if (text == NULL)
        return NULL;
    memcpy(PyUnicode_1BYTE_DATA(text), digits + sizeof digits - n, (size_t)n);
    return text;
}

static int
tuple_type(PyObject *type, const char *what)
{
    if (PyType_Check(type) && PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type))
        return 1;
    PyErr_Format(PyExc_TypeError, "%s must be a tuple subclass, not %R", what, type);
    return 0;
}

static PyObject *
received(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "received() takes 7 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *tuple = args[0], *kind = args[1], *ids = args[2], *all = args[6];
    if (!tuple_type(tuple, "tuple") || (kind != Py_None && !tuple_type(kind, "kind")))
        return NULL;
    if (!PyIter_Check(ids)) {
        PyErr_Format(PyExc_TypeError, "ids must be an iterator, not %R", Py_TYPE(ids));
        return NULL;
    }
    PyObject *rows = PySequence_Fast(all, "rows must be a sequence");
    if (rows == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(rows);
    PyObject *out = PyList_New(count);
    if (out == NULL)
        goto fail;
    PyObject *five[5] = {NULL, args[3], args[4], args[5], NULL};
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(rows, i), "a row must be a sequence");
        if (row == NULL)
            goto fail;
        PyObject *values = kind == Py_None
            ? PySequence_Tuple(row)
            : filled((PyTypeObject *)kind, PySequence_Fast_ITEMS(row), PySequence_Fast_GET_SIZE(row));
        Py_DECREF(row);
        if (values == NULL)
            goto fail;
        PyObject *number = PyIter_Next(ids);
        if (number == NULL) {
            Py_DECREF(values);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "ids ran out before rows");
            goto fail;
        }
        PyObject *id = decimal(number);
        Py_DECREF(number);
        if (id == NULL) {
            Py_DECREF(values);
            goto fail;
        }
        five[0] = id;
        five[4] = values;
        PyObject *tup = filled((PyTypeObject *)tuple, five, 5);
        Py_DECREF(id);
        Py_DECREF(values);
        if (tup == NULL)
            goto fail;
        PyList_SET_ITEM(out, i, tup);
    }
    Py_DECREF(rows);
    return out;
fail:
    Py_DECREF(rows);
    Py_XDECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"received", (PyCFunction)(void (*)(void))received, METH_FASTCALL,
     "received(tuple, kind, ids, source, stream, task, rows): see _received.py"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "storm_compat.streamparse._received",
    "The C build of storm_compat/streamparse/_received.py.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__received(void)
{
    return PyModule_Create(&module);
}
