// The C half of the harness (harness.h): a PJRT caller's side, reaching
// the plugin only through the table it is given.
#include <pthread.h>
#include <string.h>

#include "harness.h"

// Set once, before the tests run; read by every call.
static const PJRT_Api* api;

void mp_harness_use(const PJRT_Api* a) { api = a; }
const PJRT_Api* mp_harness_api(void) { return api; }

#define MP_HARNESS_DEFINE(name) \
  PJRT_Error* mp_harness_##name(name##_Args* args) { return api->name(args); }
MP_HARNESS_SLOTS(MP_HARNESS_DEFINE)
#undef MP_HARNESS_DEFINE

PJRT_Error_Code mp_harness_error_code(const PJRT_Error* e) { return e->vtable->get_code(e); }

const char* mp_harness_error_message(const PJRT_Error* e, size_t* n) {
  const char* m = NULL;
  *n = 0;
  e->vtable->message(e, &m, n);
  return m;
}

void mp_harness_error_free(PJRT_Error* e) {
  if (e != NULL) e->vtable->destroy(e);
}

// ------------------------------------------------------- event callbacks

#define ARG_BASE 0x100000
static pthread_mutex_t fired_mu = PTHREAD_MUTEX_INITIALIZER;
static int fired[MP_HARNESS_CALLBACK_SLOTS];
static int fired_code[MP_HARNESS_CALLBACK_SLOTS];

static void on_ready(PJRT_Error* err, void* user_arg) {
  int slot = (int)((uintptr_t)user_arg - ARG_BASE);
  pthread_mutex_lock(&fired_mu);
  fired[slot]++;
  fired_code[slot] = err == NULL ? 0 : (int)mp_harness_error_code(err);
  pthread_mutex_unlock(&fired_mu);
  mp_harness_error_free(err);
}

PJRT_Event_OnReadyCallback mp_harness_callback(void) { return on_ready; }
void* mp_harness_arg(int slot) { return (void*)(uintptr_t)(ARG_BASE + slot); }

void mp_harness_fired(int slot, int* n, int* code) {
  pthread_mutex_lock(&fired_mu);
  *n = fired[slot];
  *code = fired_code[slot];
  pthread_mutex_unlock(&fired_mu);
}

// ------------------------------------------------------------- one-offs

PJRT_Error* mp_harness_topology_create(void) {
  char args[128] = {0};
  return api->PJRT_TopologyDescription_Create((void*)args);
}

int mp_harness_error_paths(PJRT_Error* e, int want_code, const char* want, size_t n) {
  PJRT_Error_GetCode_Args g = {PJRT_Error_GetCode_Args_STRUCT_SIZE, NULL, e, 0};
  if (api->PJRT_Error_GetCode(&g) != NULL || (int)g.code != want_code) return 1;
  PJRT_Error_Message_Args m = {PJRT_Error_Message_Args_STRUCT_SIZE, NULL, e, NULL, 0};
  api->PJRT_Error_Message(&m);
  if (m.message_size != n || memcmp(m.message, want, n) != 0 || m.message[n] != 0) return 2;
  const char* vm = NULL;
  size_t vn = 0;
  e->vtable->message(e, &vm, &vn);
  if (vm != m.message || vn != n || (int)e->vtable->get_code(e) != want_code) return 3;
  if (e->vtable->struct_size != PJRT_Error_FunctionTable_STRUCT_SIZE || e->vtable->instance_size < sizeof(PJRT_Error)) return 4;
  PJRT_Error_ForEachPayload_Args f = {PJRT_Error_ForEachPayload_Args_STRUCT_SIZE, NULL, e, NULL, NULL};
  if (api->PJRT_Error_ForEachPayload(&f) != NULL) return 5;
  PJRT_Error_Destroy_Args d = {PJRT_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  api->PJRT_Error_Destroy(&d);
  PJRT_Error* bad = api->PJRT_Error_GetCode(NULL);  // a NULL args struct is refused, not a crash
  if (bad == NULL || mp_harness_error_code(bad) != PJRT_Error_Code_INVALID_ARGUMENT) return 6;
  mp_harness_error_free(bad);
  d.error = NULL;
  api->PJRT_Error_Destroy(&d);  // destroying NULL does nothing
  return 0;
}

static int dtors;
static void dtor(void* p) { dtors++; }

int mp_harness_user_data(PJRT_Memory* m) {
  dtors = 0;
  static int k1, k2, v1, v2, v3;
  m->vtable->set_user_data(m, &k1, &v1, dtor);
  m->vtable->set_user_data(m, &k2, &v2, dtor);
  m->vtable->set_user_data(m, &k1, &v3, dtor);  // replaces v1
  if (m->vtable->get_user_data(m, &k1) != &v3 || m->vtable->get_user_data(m, &k2) != &v2) return -1;
  if (m->vtable->get_user_data(m, &v1) != NULL) return -1;
  return dtors;
}

int mp_harness_dtors(void) { return dtors; }

PJRT_Buffer_MemoryLayout_Strides* mp_harness_layout_strides(PJRT_Buffer_MemoryLayout* l) {
  return &l->strides;
}

const int64_t* mp_harness_named_list_value(const PJRT_NamedValue* nv) {
  return nv->int64_array_value;
}
