/*
 * dml_host: runs DirectML operators for dmlops's `directml` backend.
 *
 * A Windows x64 console program (built with mingw-w64, run under Wine) that loads
 * DirectML.dll once and then serves requests from stdin, replying on stdout. Nothing
 * here knows any operator: Python sends the operator's desc struct already laid out
 * in DirectML's x64 ABI as one blob, with the offsets of the pointers inside it.
 *
 * Framing (little-endian). Request: u32 command, u64 payload length, payload.
 * Reply: u32 status, u64 payload length, payload.
 *   status 0 = ok; 1 = a call failed (payload: u32 name length, name, u32 HRESULT);
 *   2 = malformed request (payload: message).
 * At start-up the host sends one reply (the "hello"): ok, or the failed call.
 *
 * Commands:
 *   0 QUIT    no payload, no reply.
 *   1 INFO    u32 n, u32 levels[n]   -> u32 max feature level, u32 m, u32 supported[m]
 *             (supported[i] is DML_TENSOR_DATA_TYPE i's IsSupported; i = 0 is UNKNOWN).
 *   2 RUN     an operator request    -> u32 n_out, then per output: u64 size, bytes.
 *   3 CREATE  an operator request    -> (empty): IDMLDevice::CreateOperator alone.
 *
 * Operator request: u32 DML_OPERATOR_TYPE, u32 DML_FEATURE_LEVEL (the device's minimum),
 *   u32 DML_EXECUTION_FLAGS, u64 blob size, u32 n_reloc, u64 reloc[n_reloc], blob,
 *   u32 n_in, per input (DirectML binding order): u32 kind, u64 size, bytes (kind != 0),
 *   u32 n_out, per output: u32 kind, u64 size.
 *   Input kinds: 0 unbound (NULL optional tensor), 1 bound at execution, 2 owned by
 *   DML (bound at initialization). Output kinds: 0 unbound, 1 bound.
 *   Each reloc is the offset of a u64 in the blob that holds a blob-relative offset;
 *   the host adds the blob's address. NULL pointers are 0 and are not relocated.
 *   The blob's first bytes are the operator's own desc struct.
 */
#define COBJMACROS
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <initguid.h> /* define the D3D12 IIDs here: mingw-w64 ships no import library for them */
#include <d3d12.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- DirectML declarations (DirectML.h is not part of mingw-w64) ---------------- */

typedef enum { DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT = 0, DML_FEATURE_FEATURE_LEVELS = 1 } DML_FEATURE;
typedef enum { DML_BINDING_TYPE_NONE = 0, DML_BINDING_TYPE_BUFFER = 1, DML_BINDING_TYPE_BUFFER_ARRAY = 2 } DML_BINDING_TYPE;

typedef struct { UINT Type; const void *Desc; } DML_OPERATOR_DESC;
typedef struct { ID3D12Resource *Buffer; UINT64 Offset; UINT64 SizeInBytes; } DML_BUFFER_BINDING;
typedef struct { UINT BindingCount; const DML_BUFFER_BINDING *Bindings; } DML_BUFFER_ARRAY_BINDING;
typedef struct { DML_BINDING_TYPE Type; const void *Desc; } DML_BINDING_DESC;
typedef struct { UINT RequiredDescriptorCount; UINT64 TemporaryResourceSize; UINT64 PersistentResourceSize; } DML_BINDING_PROPERTIES;
typedef struct {
    void *Dispatchable; /* IDMLDispatchable* */
    D3D12_CPU_DESCRIPTOR_HANDLE CPUDescriptorHandle;
    D3D12_GPU_DESCRIPTOR_HANDLE GPUDescriptorHandle;
    UINT SizeInDescriptors;
} DML_BINDING_TABLE_DESC;
typedef struct { UINT DataType; } DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT;
typedef struct { BOOL IsSupported; } DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT;
typedef struct { UINT RequestedFeatureLevelCount; const UINT *RequestedFeatureLevels; } DML_FEATURE_QUERY_FEATURE_LEVELS;
typedef struct { UINT MaxSupportedFeatureLevel; } DML_FEATURE_DATA_FEATURE_LEVELS;

/* Every DirectML interface starts with IUnknown (3 slots) and IDMLObject (4 slots). */
#define DML_OBJECT_SLOTS(T)                                                   \
    HRESULT(STDMETHODCALLTYPE *QueryInterface)(T *, REFIID, void **);         \
    ULONG(STDMETHODCALLTYPE *AddRef)(T *);                                    \
    ULONG(STDMETHODCALLTYPE *Release)(T *);                                   \
    HRESULT(STDMETHODCALLTYPE *GetPrivateData)(T *, REFGUID, UINT *, void *); \
    HRESULT(STDMETHODCALLTYPE *SetPrivateData)(T *, REFGUID, UINT, const void *); \
    HRESULT(STDMETHODCALLTYPE *SetPrivateDataInterface)(T *, REFGUID, IUnknown *); \
    HRESULT(STDMETHODCALLTYPE *SetName)(T *, const WCHAR *);

typedef struct IDMLDevice IDMLDevice;
typedef struct IDMLObj IDMLObj; /* any DirectML object, used only for Release */
typedef struct IDMLDispatchable IDMLDispatchable;
typedef struct IDMLBindingTable IDMLBindingTable;
typedef struct IDMLCommandRecorder IDMLCommandRecorder;

struct IDMLObjVtbl { DML_OBJECT_SLOTS(IDMLObj) };
struct IDMLObj { const struct IDMLObjVtbl *lpVtbl; };

struct IDMLDeviceVtbl {
    DML_OBJECT_SLOTS(IDMLDevice)
    HRESULT(STDMETHODCALLTYPE *CheckFeatureSupport)(IDMLDevice *, DML_FEATURE, UINT, const void *, UINT, void *);
    HRESULT(STDMETHODCALLTYPE *CreateOperator)(IDMLDevice *, const DML_OPERATOR_DESC *, REFIID, void **);
    HRESULT(STDMETHODCALLTYPE *CompileOperator)(IDMLDevice *, void *op, UINT flags, REFIID, void **);
    HRESULT(STDMETHODCALLTYPE *CreateOperatorInitializer)(IDMLDevice *, UINT, void *const *ops, REFIID, void **);
    HRESULT(STDMETHODCALLTYPE *CreateCommandRecorder)(IDMLDevice *, REFIID, void **);
    HRESULT(STDMETHODCALLTYPE *CreateBindingTable)(IDMLDevice *, const DML_BINDING_TABLE_DESC *, REFIID, void **);
    HRESULT(STDMETHODCALLTYPE *Evict)(IDMLDevice *, UINT, void *const *);
    HRESULT(STDMETHODCALLTYPE *MakeResident)(IDMLDevice *, UINT, void *const *);
    HRESULT(STDMETHODCALLTYPE *GetDeviceRemovedReason)(IDMLDevice *);
    HRESULT(STDMETHODCALLTYPE *GetParentDevice)(IDMLDevice *, REFIID, void **);
};
struct IDMLDevice { const struct IDMLDeviceVtbl *lpVtbl; };

/* IDMLCompiledOperator and IDMLOperatorInitializer: IDMLDeviceChild -> IDMLPageable ->
 * IDMLDispatchable. GetBindingProperties returns a struct: in the COM ABI the caller
 * passes the return slot as a hidden pointer after `this`. */
struct IDMLDispatchableVtbl {
    DML_OBJECT_SLOTS(IDMLDispatchable)
    HRESULT(STDMETHODCALLTYPE *GetDevice)(IDMLDispatchable *, REFIID, void **);
    DML_BINDING_PROPERTIES *(STDMETHODCALLTYPE *GetBindingProperties)(IDMLDispatchable *, DML_BINDING_PROPERTIES *);
};
struct IDMLDispatchable { const struct IDMLDispatchableVtbl *lpVtbl; };

struct IDMLBindingTableVtbl {
    DML_OBJECT_SLOTS(IDMLBindingTable)
    HRESULT(STDMETHODCALLTYPE *GetDevice)(IDMLBindingTable *, REFIID, void **);
    void(STDMETHODCALLTYPE *BindInputs)(IDMLBindingTable *, UINT, const DML_BINDING_DESC *);
    void(STDMETHODCALLTYPE *BindOutputs)(IDMLBindingTable *, UINT, const DML_BINDING_DESC *);
    void(STDMETHODCALLTYPE *BindTemporaryResource)(IDMLBindingTable *, const DML_BINDING_DESC *);
    void(STDMETHODCALLTYPE *BindPersistentResource)(IDMLBindingTable *, const DML_BINDING_DESC *);
    HRESULT(STDMETHODCALLTYPE *Reset)(IDMLBindingTable *, const DML_BINDING_TABLE_DESC *);
};
struct IDMLBindingTable { const struct IDMLBindingTableVtbl *lpVtbl; };

struct IDMLCommandRecorderVtbl {
    DML_OBJECT_SLOTS(IDMLCommandRecorder)
    HRESULT(STDMETHODCALLTYPE *GetDevice)(IDMLCommandRecorder *, REFIID, void **);
    void(STDMETHODCALLTYPE *RecordDispatch)(IDMLCommandRecorder *, ID3D12CommandList *, IDMLDispatchable *,
                                            IDMLBindingTable *);
};
struct IDMLCommandRecorder { const struct IDMLCommandRecorderVtbl *lpVtbl; };

typedef HRESULT(WINAPI *PFN_DMLCreateDevice1)(ID3D12Device *, UINT flags, UINT minimumFeatureLevel, REFIID, void **);

static const GUID IID_IDMLDevice = {0x6dbd6437, 0x96fd, 0x423f, {0xa9, 0x8c, 0xae, 0x5e, 0x7c, 0x2a, 0x57, 0x3f}};
static const GUID IID_IDMLOperator = {0x26caae7a, 0x3081, 0x4633, {0x95, 0x81, 0x22, 0x6f, 0xbe, 0x57, 0x69, 0x5d}};
static const GUID IID_IDMLCompiledOperator = {0x6b15e56a, 0xbf5c, 0x4902, {0x92, 0xd8, 0xda, 0x3a, 0x65, 0x0a, 0xfe, 0xa4}};
static const GUID IID_IDMLOperatorInitializer = {0x427c1113, 0x435c, 0x469c, {0x86, 0x76, 0x4d, 0x5d, 0xd0, 0x72, 0xf8, 0x13}};
static const GUID IID_IDMLBindingTable = {0x29c687dc, 0xde74, 0x4e3b, {0xab, 0x00, 0x11, 0x68, 0xf2, 0xfc, 0x3c, 0xfc}};
static const GUID IID_IDMLCommandRecorder = {0xe6857a76, 0x2e3e, 0x4fdd, {0xbf, 0xf4, 0x5d, 0x2b, 0xa1, 0x0f, 0xb4, 0x53}};

/* ---- I/O ------------------------------------------------------------------------- */

enum { CMD_QUIT = 0, CMD_INFO = 1, CMD_RUN = 2, CMD_CREATE = 3 };
enum { ST_OK = 0, ST_CALL_FAILED = 1, ST_BAD_REQUEST = 2 };

static HANDLE g_in, g_out;

static int read_exact(void *dst, uint64_t n) {
    uint8_t *p = dst;
    while (n) {
        DWORD chunk = n > (1u << 30) ? (1u << 30) : (DWORD)n, got = 0;
        if (!ReadFile(g_in, p, chunk, &got, NULL) || got == 0) return 0;
        p += got;
        n -= got;
    }
    return 1;
}

static int write_exact(const void *src, uint64_t n) {
    const uint8_t *p = src;
    while (n) {
        DWORD chunk = n > (1u << 30) ? (1u << 30) : (DWORD)n, put = 0;
        if (!WriteFile(g_out, p, chunk, &put, NULL) || put == 0) return 0;
        p += put;
        n -= put;
    }
    return 1;
}

/* A growable reply payload. */
typedef struct { uint8_t *data; uint64_t size, cap; } Buf;

static void buf_put(Buf *b, const void *src, uint64_t n) {
    if (b->size + n > b->cap) {
        uint64_t cap = b->cap ? b->cap : 256;
        while (cap < b->size + n) cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data) { fprintf(stderr, "dml_host: out of memory\n"); ExitProcess(3); }
        b->cap = cap;
    }
    memcpy(b->data + b->size, src, n);
    b->size += n;
}
static void buf_u32(Buf *b, uint32_t v) { buf_put(b, &v, 4); }
static void buf_u64(Buf *b, uint64_t v) { buf_put(b, &v, 8); }

static int send_reply(uint32_t status, const Buf *b) {
    uint64_t n = b ? b->size : 0;
    return write_exact(&status, 4) && write_exact(&n, 8) && (n == 0 || write_exact(b->data, n));
}

static int send_failure(const char *call, HRESULT hr) {
    Buf b = {0};
    buf_u32(&b, (uint32_t)strlen(call));
    buf_put(&b, call, strlen(call));
    buf_u32(&b, (uint32_t)hr);
    int ok = send_reply(ST_CALL_FAILED, &b);
    free(b.data);
    return ok;
}

static int send_bad_request(const char *msg) {
    Buf b = {0};
    buf_put(&b, msg, strlen(msg));
    int ok = send_reply(ST_BAD_REQUEST, &b);
    free(b.data);
    return ok;
}

/* A cursor over a request payload. */
typedef struct { const uint8_t *p, *end; int bad; } Cur;

static const void *cur_take(Cur *c, uint64_t n) {
    if (c->bad || (uint64_t)(c->end - c->p) < n) { c->bad = 1; return NULL; }
    const void *r = c->p;
    c->p += n;
    return r;
}
static uint32_t cur_u32(Cur *c) { uint32_t v = 0; const void *s = cur_take(c, 4); if (s) memcpy(&v, s, 4); return v; }
static uint64_t cur_u64(Cur *c) { uint64_t v = 0; const void *s = cur_take(c, 8); if (s) memcpy(&v, s, 8); return v; }

/* ---- D3D12 state ------------------------------------------------------------------ */

static ID3D12Device *g_d3d;
static ID3D12CommandQueue *g_queue;
static ID3D12CommandAllocator *g_alloc;
static ID3D12GraphicsCommandList *g_list;
static ID3D12Fence *g_fence;
static UINT64 g_fence_value;
static HANDLE g_event;
static PFN_DMLCreateDevice1 g_create_device;

/* One IDMLDevice per requested minimum feature level, created on first use. */
#define MAX_DEVICES 32
static struct { UINT level; IDMLDevice *dev; } g_devices[MAX_DEVICES];

static const char *g_failed_call;
static int g_device_lost;
#define CHECK(call_name, expr)                         \
    do {                                               \
        hr = (expr);                                   \
        if (FAILED(hr)) { g_failed_call = call_name; goto done; } \
    } while (0)

static void release(void *obj) {
    if (obj) ((IDMLObj *)obj)->lpVtbl->Release((IDMLObj *)obj);
}

static HRESULT init_d3d(void) {
    HRESULT hr;
    HMODULE dml = LoadLibraryA("DirectML.dll");
    if (!dml) { g_failed_call = "LoadLibrary(DirectML.dll)"; return HRESULT_FROM_WIN32(GetLastError()); }
    g_create_device = (PFN_DMLCreateDevice1)(void *)GetProcAddress(dml, "DMLCreateDevice1");
    if (!g_create_device) { g_failed_call = "GetProcAddress(DMLCreateDevice1)"; return HRESULT_FROM_WIN32(GetLastError()); }
    CHECK("D3D12CreateDevice", D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, (void **)&g_d3d));
    D3D12_COMMAND_QUEUE_DESC qd = {0};
    qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
    CHECK("ID3D12Device::CreateCommandQueue",
          ID3D12Device_CreateCommandQueue(g_d3d, &qd, &IID_ID3D12CommandQueue, (void **)&g_queue));
    CHECK("ID3D12Device::CreateCommandAllocator",
          ID3D12Device_CreateCommandAllocator(g_d3d, D3D12_COMMAND_LIST_TYPE_DIRECT, &IID_ID3D12CommandAllocator,
                                              (void **)&g_alloc));
    CHECK("ID3D12Device::CreateCommandList",
          ID3D12Device_CreateCommandList(g_d3d, 0, D3D12_COMMAND_LIST_TYPE_DIRECT, g_alloc, NULL,
                                         &IID_ID3D12GraphicsCommandList, (void **)&g_list));
    CHECK("ID3D12GraphicsCommandList::Close", ID3D12GraphicsCommandList_Close(g_list));
    CHECK("ID3D12Device::CreateFence",
          ID3D12Device_CreateFence(g_d3d, 0, D3D12_FENCE_FLAG_NONE, &IID_ID3D12Fence, (void **)&g_fence));
    g_event = CreateEventA(NULL, FALSE, FALSE, NULL);
    if (!g_event) { g_failed_call = "CreateEvent"; return HRESULT_FROM_WIN32(GetLastError()); }
    /* The level-1_0 device doubles as a check that DirectML accepts this D3D12 device. */
    IDMLDevice *dev = NULL;
    CHECK("DMLCreateDevice1", g_create_device(g_d3d, 0, 0x1000, &IID_IDMLDevice, (void **)&dev));
    g_devices[0].level = 0x1000;
    g_devices[0].dev = dev;
done:
    return hr;
}

static HRESULT get_device(UINT level, IDMLDevice **out) {
    HRESULT hr = S_OK;
    int i;
    for (i = 0; i < MAX_DEVICES && g_devices[i].dev; i++) {
        if (g_devices[i].level == level) { *out = g_devices[i].dev; return S_OK; }
    }
    if (i == MAX_DEVICES) i = MAX_DEVICES - 1, release(g_devices[i].dev), g_devices[i].dev = NULL;
    CHECK("DMLCreateDevice1", g_create_device(g_d3d, 0, level, &IID_IDMLDevice, (void **)out));
    g_devices[i].level = level;
    g_devices[i].dev = *out;
done:
    return hr;
}

static HRESULT create_buffer(D3D12_HEAP_TYPE heap, UINT64 size, D3D12_RESOURCE_FLAGS flags,
                             D3D12_RESOURCE_STATES state, ID3D12Resource **out) {
    D3D12_HEAP_PROPERTIES hp = {0};
    hp.Type = heap;
    D3D12_RESOURCE_DESC rd = {0};
    rd.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
    rd.Width = size ? size : 4;
    rd.Height = 1;
    rd.DepthOrArraySize = 1;
    rd.MipLevels = 1;
    rd.Format = DXGI_FORMAT_UNKNOWN;
    rd.SampleDesc.Count = 1;
    rd.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
    rd.Flags = flags;
    return ID3D12Device_CreateCommittedResource(g_d3d, &hp, D3D12_HEAP_FLAG_NONE, &rd, state, NULL,
                                                &IID_ID3D12Resource, (void **)out);
}

static void transition(ID3D12Resource *r, D3D12_RESOURCE_STATES before, D3D12_RESOURCE_STATES after) {
    D3D12_RESOURCE_BARRIER b = {0};
    b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
    b.Transition.pResource = r;
    b.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
    b.Transition.StateBefore = before;
    b.Transition.StateAfter = after;
    ID3D12GraphicsCommandList_ResourceBarrier(g_list, 1, &b);
}

static void uav_barrier(void) {
    D3D12_RESOURCE_BARRIER b = {0};
    b.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
    ID3D12GraphicsCommandList_ResourceBarrier(g_list, 1, &b);
}

/* ---- commands --------------------------------------------------------------------- */

static int do_info(Cur *c) {
    HRESULT hr = S_OK;
    g_failed_call = NULL;
    uint32_t n = cur_u32(c);
    const void *levels = cur_take(c, (uint64_t)n * 4);
    if (c->bad || n == 0) return send_bad_request("INFO: malformed payload");
    IDMLDevice *dev = g_devices[0].dev;
    DML_FEATURE_QUERY_FEATURE_LEVELS q = {n, levels};
    DML_FEATURE_DATA_FEATURE_LEVELS fl = {0};
    CHECK("IDMLDevice::CheckFeatureSupport(DML_FEATURE_FEATURE_LEVELS)",
          dev->lpVtbl->CheckFeatureSupport(dev, DML_FEATURE_FEATURE_LEVELS, sizeof q, &q, sizeof fl, &fl));
    Buf b = {0};
    buf_u32(&b, fl.MaxSupportedFeatureLevel);
    const uint32_t ntypes = 14; /* DML_TENSOR_DATA_TYPE_UNKNOWN .. DML_TENSOR_DATA_TYPE_INT4 */
    buf_u32(&b, ntypes);
    buf_u32(&b, 0);
    for (uint32_t t = 1; t < ntypes; t++) {
        DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT tq = {t};
        DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT ts = {0};
        hr = dev->lpVtbl->CheckFeatureSupport(dev, DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof tq, &tq, sizeof ts, &ts);
        if (FAILED(hr)) {
            free(b.data);
            g_failed_call = "IDMLDevice::CheckFeatureSupport(DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT)";
            goto done;
        }
        buf_u32(&b, ts.IsSupported ? 1 : 0);
    }
    int ok = send_reply(ST_OK, &b);
    free(b.data);
    return ok;
done:
    return send_failure(g_failed_call, hr);
}

#define MAX_TENSORS 256
#define ALIGN(x, a) (((x) + (a) - 1) & ~(uint64_t)((a) - 1))

typedef struct { uint32_t kind; uint64_t size, offset; const uint8_t *data; } Slot;

static int do_operator(Cur *c, int run) {
    HRESULT hr = S_OK;
    g_failed_call = NULL;
    uint8_t *blob = NULL;
    void *op = NULL, *compiled = NULL, *initializer = NULL;
    IDMLBindingTable *table = NULL;
    IDMLCommandRecorder *recorder = NULL;
    ID3D12DescriptorHeap *heap = NULL;
    ID3D12Resource *io = NULL, *upload = NULL, *readback = NULL, *temp = NULL, *persistent = NULL;
    Slot ins[MAX_TENSORS], outs[MAX_TENSORS];
    Buf reply = {0};
    int ok;

    uint32_t op_type = cur_u32(c), level = cur_u32(c), exec_flags = cur_u32(c);
    uint64_t blob_size = cur_u64(c);
    uint32_t n_reloc = cur_u32(c);
    const uint8_t *relocs = cur_take(c, (uint64_t)n_reloc * 8);
    const uint8_t *blob_src = cur_take(c, blob_size);
    uint32_t n_in = cur_u32(c);
    if (c->bad || n_in > MAX_TENSORS) return send_bad_request("operator request: malformed header or inputs");
    for (uint32_t i = 0; i < n_in; i++) {
        ins[i].kind = cur_u32(c);
        ins[i].size = cur_u64(c);
        ins[i].data = ins[i].kind ? cur_take(c, ins[i].size) : NULL;
        if (ins[i].kind > 2) c->bad = 1;
    }
    uint32_t n_out = cur_u32(c);
    if (c->bad || n_out > MAX_TENSORS) return send_bad_request("operator request: malformed inputs or outputs");
    for (uint32_t i = 0; i < n_out; i++) {
        outs[i].kind = cur_u32(c);
        outs[i].size = cur_u64(c);
        outs[i].data = NULL;
        if (outs[i].kind > 1) c->bad = 1;
    }
    if (c->bad || c->p != c->end) return send_bad_request("operator request: malformed outputs or trailing bytes");

    /* The blob, 16-byte aligned, with its pointers made absolute. */
    blob = _aligned_malloc(blob_size ? blob_size : 16, 16);
    if (!blob) return send_bad_request("operator request: out of memory");
    memcpy(blob, blob_src, blob_size);
    for (uint32_t i = 0; i < n_reloc; i++) {
        uint64_t at, rel;
        memcpy(&at, relocs + 8 * (uint64_t)i, 8);
        if (at + 8 > blob_size || at % 8) { _aligned_free(blob); return send_bad_request("relocation outside the blob"); }
        memcpy(&rel, blob + at, 8);
        if (rel >= blob_size) { _aligned_free(blob); return send_bad_request("relocation target outside the blob"); }
        uint64_t absolute = (uint64_t)(uintptr_t)blob + rel;
        memcpy(blob + at, &absolute, 8);
    }

    IDMLDevice *dev = NULL;
    hr = get_device(level, &dev);
    if (FAILED(hr)) goto done;
    DML_OPERATOR_DESC desc = {op_type, blob};
    CHECK("IDMLDevice::CreateOperator", dev->lpVtbl->CreateOperator(dev, &desc, &IID_IDMLOperator, &op));
    if (!run) goto done;
    CHECK("IDMLDevice::CompileOperator",
          dev->lpVtbl->CompileOperator(dev, op, exec_flags, &IID_IDMLCompiledOperator, &compiled));
    CHECK("IDMLDevice::CreateOperatorInitializer",
          dev->lpVtbl->CreateOperatorInitializer(dev, 1, &compiled, &IID_IDMLOperatorInitializer, &initializer));
    DML_BINDING_PROPERTIES ip, ep;
    ((IDMLDispatchable *)initializer)->lpVtbl->GetBindingProperties(initializer, &ip);
    ((IDMLDispatchable *)compiled)->lpVtbl->GetBindingProperties(compiled, &ep);

    /* One default buffer holds every tensor: inputs first, then outputs, 256-aligned. */
    uint64_t total = 0;
    for (uint32_t i = 0; i < n_in; i++)
        if (ins[i].kind) ins[i].offset = total, total = ALIGN(total + ins[i].size, 256);
    uint64_t out_begin = total;
    for (uint32_t i = 0; i < n_out; i++)
        if (outs[i].kind) outs[i].offset = total, total = ALIGN(total + outs[i].size, 256);
    if (total == 0) total = 256;
    CHECK("ID3D12Device::CreateCommittedResource(tensors)",
          create_buffer(D3D12_HEAP_TYPE_DEFAULT, total, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS,
                        D3D12_RESOURCE_STATE_COPY_DEST, &io));
    CHECK("ID3D12Device::CreateCommittedResource(upload)",
          create_buffer(D3D12_HEAP_TYPE_UPLOAD, total, D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_GENERIC_READ,
                        &upload));
    CHECK("ID3D12Device::CreateCommittedResource(readback)",
          create_buffer(D3D12_HEAP_TYPE_READBACK, total, D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_COPY_DEST,
                        &readback));
    uint64_t temp_size = ip.TemporaryResourceSize > ep.TemporaryResourceSize ? ip.TemporaryResourceSize
                                                                              : ep.TemporaryResourceSize;
    if (temp_size)
        CHECK("ID3D12Device::CreateCommittedResource(temporary)",
              create_buffer(D3D12_HEAP_TYPE_DEFAULT, temp_size, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS,
                            D3D12_RESOURCE_STATE_UNORDERED_ACCESS, &temp));
    if (ep.PersistentResourceSize)
        CHECK("ID3D12Device::CreateCommittedResource(persistent)",
              create_buffer(D3D12_HEAP_TYPE_DEFAULT, ep.PersistentResourceSize,
                            D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                            &persistent));

    uint8_t *mapped = NULL;
    D3D12_RANGE none = {0, 0};
    CHECK("ID3D12Resource::Map(upload)", ID3D12Resource_Map(upload, 0, &none, (void **)&mapped));
    memset(mapped, 0, total);
    for (uint32_t i = 0; i < n_in; i++)
        if (ins[i].kind) memcpy(mapped + ins[i].offset, ins[i].data, ins[i].size);
    ID3D12Resource_Unmap(upload, 0, NULL);

    /* The initializer's descriptors come first in the heap, the operator's after them:
     * both dispatches are in one command list, so they may not share descriptors. */
    UINT n_desc = ip.RequiredDescriptorCount + ep.RequiredDescriptorCount;
    D3D12_DESCRIPTOR_HEAP_DESC hd = {0};
    hd.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV;
    hd.NumDescriptors = n_desc ? n_desc : 1;
    hd.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE;
    CHECK("ID3D12Device::CreateDescriptorHeap",
          ID3D12Device_CreateDescriptorHeap(g_d3d, &hd, &IID_ID3D12DescriptorHeap, (void **)&heap));
    UINT inc = ID3D12Device_GetDescriptorHandleIncrementSize(g_d3d, D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV);
    /* Struct-returning COM methods: the return slot is a hidden pointer after `this`. */
    D3D12_CPU_DESCRIPTOR_HANDLE cpu0;
    D3D12_GPU_DESCRIPTOR_HANDLE gpu0;
    heap->lpVtbl->GetCPUDescriptorHandleForHeapStart(heap, &cpu0);
    heap->lpVtbl->GetGPUDescriptorHandleForHeapStart(heap, &gpu0);

    CHECK("IDMLDevice::CreateCommandRecorder",
          dev->lpVtbl->CreateCommandRecorder(dev, &IID_IDMLCommandRecorder, (void **)&recorder));
    CHECK("ID3D12CommandAllocator::Reset", ID3D12CommandAllocator_Reset(g_alloc));
    CHECK("ID3D12GraphicsCommandList::Reset", ID3D12GraphicsCommandList_Reset(g_list, g_alloc, NULL));
    ID3D12GraphicsCommandList_SetDescriptorHeaps(g_list, 1, &heap);
    ID3D12GraphicsCommandList_CopyBufferRegion(g_list, io, 0, upload, 0, total);
    transition(io, D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);

    DML_BUFFER_BINDING temp_binding = {temp, 0, temp_size};
    DML_BINDING_DESC temp_desc = {DML_BINDING_TYPE_BUFFER, &temp_binding};
    DML_BUFFER_BINDING persistent_binding = {persistent, 0, ep.PersistentResourceSize};
    DML_BINDING_DESC persistent_desc = {DML_BINDING_TYPE_BUFFER, &persistent_binding};

    /* Initialization: owned-by-DML inputs in, the persistent resource out. */
    DML_BINDING_TABLE_DESC td = {initializer, cpu0, gpu0, ip.RequiredDescriptorCount};
    CHECK("IDMLDevice::CreateBindingTable", dev->lpVtbl->CreateBindingTable(dev, &td, &IID_IDMLBindingTable,
                                                                          (void **)&table));
    DML_BUFFER_BINDING owned[MAX_TENSORS];
    int any_owned = 0;
    for (uint32_t i = 0; i < n_in; i++) {
        DML_BUFFER_BINDING b = {NULL, 0, 0};
        if (ins[i].kind == 2) b.Buffer = io, b.Offset = ins[i].offset, b.SizeInBytes = ins[i].size, any_owned = 1;
        owned[i] = b;
    }
    DML_BUFFER_ARRAY_BINDING owned_array = {n_in, owned};
    DML_BINDING_DESC owned_desc = {DML_BINDING_TYPE_BUFFER_ARRAY, &owned_array};
    if (any_owned) table->lpVtbl->BindInputs(table, 1, &owned_desc);
    if (ip.TemporaryResourceSize) table->lpVtbl->BindTemporaryResource(table, &temp_desc);
    if (ep.PersistentResourceSize) table->lpVtbl->BindOutputs(table, 1, &persistent_desc);
    recorder->lpVtbl->RecordDispatch(recorder, (ID3D12CommandList *)g_list, initializer, table);
    uav_barrier();

    /* Execution. */
    D3D12_CPU_DESCRIPTOR_HANDLE cpu1 = {cpu0.ptr + (SIZE_T)ip.RequiredDescriptorCount * inc};
    D3D12_GPU_DESCRIPTOR_HANDLE gpu1 = {gpu0.ptr + (UINT64)ip.RequiredDescriptorCount * inc};
    DML_BINDING_TABLE_DESC te = {compiled, cpu1, gpu1, ep.RequiredDescriptorCount};
    CHECK("IDMLBindingTable::Reset", table->lpVtbl->Reset(table, &te));
    DML_BUFFER_BINDING in_b[MAX_TENSORS], out_b[MAX_TENSORS];
    DML_BINDING_DESC in_d[MAX_TENSORS], out_d[MAX_TENSORS];
    for (uint32_t i = 0; i < n_in; i++) {
        in_b[i].Buffer = io, in_b[i].Offset = ins[i].offset, in_b[i].SizeInBytes = ins[i].size;
        in_d[i].Type = ins[i].kind == 1 ? DML_BINDING_TYPE_BUFFER : DML_BINDING_TYPE_NONE;
        in_d[i].Desc = ins[i].kind == 1 ? &in_b[i] : NULL;
    }
    for (uint32_t i = 0; i < n_out; i++) {
        out_b[i].Buffer = io, out_b[i].Offset = outs[i].offset, out_b[i].SizeInBytes = outs[i].size;
        out_d[i].Type = outs[i].kind ? DML_BINDING_TYPE_BUFFER : DML_BINDING_TYPE_NONE;
        out_d[i].Desc = outs[i].kind ? &out_b[i] : NULL;
    }
    if (n_in) table->lpVtbl->BindInputs(table, n_in, in_d);
    if (n_out) table->lpVtbl->BindOutputs(table, n_out, out_d);
    if (ep.TemporaryResourceSize) table->lpVtbl->BindTemporaryResource(table, &temp_desc);
    if (ep.PersistentResourceSize) table->lpVtbl->BindPersistentResource(table, &persistent_desc);
    recorder->lpVtbl->RecordDispatch(recorder, (ID3D12CommandList *)g_list, compiled, table);
    uav_barrier();

    transition(io, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_SOURCE);
    if (total > out_begin)
        ID3D12GraphicsCommandList_CopyBufferRegion(g_list, readback, out_begin, io, out_begin, total - out_begin);
    CHECK("ID3D12GraphicsCommandList::Close", ID3D12GraphicsCommandList_Close(g_list));
    ID3D12CommandList *lists[1] = {(ID3D12CommandList *)g_list};
    ID3D12CommandQueue_ExecuteCommandLists(g_queue, 1, lists);
    CHECK("ID3D12CommandQueue::Signal", ID3D12CommandQueue_Signal(g_queue, g_fence, ++g_fence_value));
    CHECK("ID3D12Fence::SetEventOnCompletion", ID3D12Fence_SetEventOnCompletion(g_fence, g_fence_value, g_event));
    if (WaitForSingleObject(g_event, 120000) != WAIT_OBJECT_0) {
        hr = HRESULT_FROM_WIN32(WAIT_TIMEOUT);
        g_failed_call = "WaitForSingleObject(fence)";
        goto done;
    }
    hr = ID3D12Device_GetDeviceRemovedReason(g_d3d);
    if (SUCCEEDED(hr)) hr = dev->lpVtbl->GetDeviceRemovedReason(dev);
    if (FAILED(hr)) {
        /* Nothing can run on a removed device: reply, then exit so that Python starts afresh. */
        g_failed_call = "ID3D12Device::GetDeviceRemovedReason";
        g_device_lost = 1;
        goto done;
    }

    D3D12_RANGE all = {0, (SIZE_T)total};
    CHECK("ID3D12Resource::Map(readback)", ID3D12Resource_Map(readback, 0, &all, (void **)&mapped));
    buf_u32(&reply, n_out);
    for (uint32_t i = 0; i < n_out; i++) {
        uint64_t size = outs[i].kind ? outs[i].size : 0;
        buf_u64(&reply, size);
        if (size) buf_put(&reply, mapped + outs[i].offset, size);
    }
    ID3D12Resource_Unmap(readback, 0, &none);

done:
    if (g_failed_call) ok = send_failure(g_failed_call, hr);
    else ok = send_reply(ST_OK, &reply);
    free(reply.data);
    release(table);
    release(recorder);
    release(initializer);
    release(compiled);
    release(op);
    if (heap) ID3D12DescriptorHeap_Release(heap);
    if (io) ID3D12Resource_Release(io);
    if (upload) ID3D12Resource_Release(upload);
    if (readback) ID3D12Resource_Release(readback);
    if (temp) ID3D12Resource_Release(temp);
    if (persistent) ID3D12Resource_Release(persistent);
    _aligned_free(blob);
    return ok;
}

int main(void) {
    g_in = GetStdHandle(STD_INPUT_HANDLE);
    g_out = GetStdHandle(STD_OUTPUT_HANDLE);
    g_failed_call = NULL;
    HRESULT hr = init_d3d();
    if (FAILED(hr)) {
        send_failure(g_failed_call ? g_failed_call : "initialisation", hr);
        return 1;
    }
    if (!send_reply(ST_OK, NULL)) return 1;
    for (;;) {
        uint32_t cmd;
        uint64_t size;
        if (!read_exact(&cmd, 4) || !read_exact(&size, 8)) return 0; /* Python went away */
        if (cmd == CMD_QUIT) return 0;
        uint8_t *payload = malloc(size ? size : 1);
        if (!payload) { send_bad_request("request too large"); return 2; }
        if (!read_exact(payload, size)) { free(payload); return 0; }
        Cur c = {payload, payload + size, 0};
        int ok;
        switch (cmd) {
        case CMD_INFO: ok = do_info(&c); break;
        case CMD_RUN: ok = do_operator(&c, 1); break;
        case CMD_CREATE: ok = do_operator(&c, 0); break;
        default: ok = send_bad_request("unknown command"); break;
        }
        free(payload);
        if (!ok || g_device_lost) return 0;
    }
}
