// The loader: what TensorFlow finds in site-packages/tensorflow-plugins when
// metalplug comes from its universal wheel, which carries one build of the
// library per supported TensorFlow release (metalplug/builds/tf-X.Y/) and
// one for processes without TensorFlow (metalplug/builds/jax/).
//
// TensorFlow loads every shared object in tensorflow-plugins and looks up
// SE_InitPlugin, TF_InitGraph, TF_InitKernel and TF_InitProfiler in it. The
// loader asks the TensorFlow in the process for its version, loads the build
// made for that minor release and hands each call to it. It is plain C with
// no Go in it: the build it loads holds the process's only Go runtime, and
// jax_plugins.metalplug loads that same file (it asks the loader which one
// it chose), so TensorFlow and jax in one process share it.
//
// When no build fits (a TensorFlow the wheel was not built for, a build that
// will not load, or another of our builds already in the process), the
// loader declines: one line on stderr naming the running TensorFlow and the
// fix, and a platform with no devices. It cannot return an error instead:
// TensorFlow aborts the process when a plugin's init fails. It is compiled
// against one TensorFlow release's headers; the structs it fills are the
// PluggableDevice C API's, versioned by struct_size, so one compile serves
// every release of the wheel.
#define _GNU_SOURCE  // dladdr
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "declined.h"

#ifdef __APPLE__
#define LIBRARY "libmetalplug.dylib"
static const char* tf_libs[] = {"libtensorflow_framework.2.dylib", "libtensorflow_cc.2.dylib", NULL};
#else
#define LIBRARY "libmetalplug.so"
static const char* tf_libs[] = {"libtensorflow_framework.so.2", "libtensorflow_cc.so.2", NULL};
#endif

#define MAX_BUILDS 32

// Built with -fvisibility=hidden: these five are all it exports.
#define EXPORT __attribute__((visibility("default")))

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void* build;                // the chosen build, NULL when declined
static char build_path[PATH_MAX];  // its path

// The builds directory: site-packages/metalplug/builds, found from where
// this file is.
static int builds_dir(char* out) {
  Dl_info info;
  if (!dladdr((void*)builds_dir, &info) || !info.dli_fname) return 0;
  char self[PATH_MAX];
  if (!realpath(info.dli_fname, self)) return 0;
  char* slash = strrchr(self, '/');
  if (!slash) return 0;
  if (slash - self + sizeof "/../metalplug/builds" > sizeof self) return 0;
  strcpy(slash, "/../metalplug/builds");  // from site-packages/tensorflow-plugins
  return realpath(self, out) != NULL;  // out holds PATH_MAX
}

// A symbol of the TensorFlow already in the process, or NULL. The loader
// links nothing of TensorFlow, so that it loads beside any release.
void* tf_symbol(const char* name) {
  for (int i = 0; tf_libs[i]; i++) {
    void* lib = dlopen(tf_libs[i], RTLD_LAZY | RTLD_NOLOAD);  // only what TensorFlow loaded
    if (!lib) continue;
    void* sym = dlsym(lib, name);
    dlclose(lib);
    if (sym) return sym;
  }
  return NULL;
}

// TF_Version of the TensorFlow in the process, "" when it has none.
static const char* running_version(void) {
  const char* (*fn)(void) = (const char* (*)(void))tf_symbol("TF_Version");
  return fn ? fn() : "";
}

// The "X.Y" of a version, into out.
static void minor_of(const char* v, char* out, size_t n) {
  snprintf(out, n, "%s", v);
  char* dot = strchr(out, '.');
  if (dot && (dot = strchr(dot + 1, '.'))) *dot = 0;
}

// Compares "X.Y" minors numerically.
static int minor_cmp(const char* a, const char* b) {
  int am = 0, an = 0, bm = 0, bn = 0;
  sscanf(a, "%d.%d", &am, &an);
  sscanf(b, "%d.%d", &bm, &bn);
  return am != bm ? am - bm : an - bn;
}

static int is_file(const char* p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

// The builds in dir: names[i] is "tf-X.Y" or "jax"; count returned.
static int list_builds(const char* dir, char names[][64]) {
  DIR* d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) && n < MAX_BUILDS) {
    if (e->d_name[0] == '.' || strlen(e->d_name) >= 64) continue;
    char lib[PATH_MAX];
    snprintf(lib, sizeof lib, "%s/%s/" LIBRARY, dir, e->d_name);
    if (is_file(lib)) snprintf(names[n++], 64, "%s", e->d_name);
  }
  closedir(d);
  // Sorted by TensorFlow release, for the message and for the newest.
  for (int i = 1; i < n; i++) {
    for (int j = i; j > 0; j--) {
      const char *a = names[j - 1], *b = names[j];
      int swap = strncmp(a, "tf-", 3) != 0 || (strncmp(b, "tf-", 3) == 0 && minor_cmp(a + 3, b + 3) > 0);
      if (!swap) break;
      char t[64];
      memcpy(t, a, 64);
      memcpy(names[j - 1], b, 64);
      memcpy(names[j], t, 64);
    }
  }
  return n;
}

// decline says why, in one line that names the fix last.
static void decline(const char* why) {
  fprintf(stderr, "metalplug: %s\n", why);
  build = NULL;
}

static void choose(void) {
  if (getenv("METALPLUG_LOADER_DEBUG")) fprintf(stderr, "metalplug: loader: choosing a build\n");
  char dir[PATH_MAX];
  if (!builds_dir(dir)) {
    decline("the loader finds no metalplug/builds directory beside tensorflow-plugins: offering no device; reinstall metalplug");
    return;
  }
  char names[MAX_BUILDS][64];
  int n = list_builds(dir, names);
  char supported[512] = "";
  const char* newest = NULL;
  for (int i = 0; i < n; i++) {
    if (strncmp(names[i], "tf-", 3) != 0) continue;
    if (supported[0]) strncat(supported, ", ", sizeof supported - strlen(supported) - 1);
    strncat(supported, names[i] + 3, sizeof supported - strlen(supported) - 1);
    newest = names[i];
  }
  const char* running = running_version();
  char minor[64], want[64], why[2 * PATH_MAX];
  minor_of(running, minor, sizeof minor);
  snprintf(want, sizeof want, "tf-%s", minor);
  const char* pick = NULL;
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i], want) == 0) pick = names[i];
  }
  const char* skip = getenv("METALPLUG_SKIP_VERSION_CHECK");
  if (!pick && skip && strcmp(skip, "1") == 0) pick = newest;  // experiments: the newest build, which says it is mismatched
  if (!pick) {
    snprintf(why, sizeof why,
             "TensorFlow %s is running, and this metalplug carries builds for TensorFlow %s only (in %s): offering no "
             "device. For this TensorFlow, build metalplug from its sdist: pip install --force-reinstall --no-deps --no-binary metalplug metalplug",
             running[0] ? running : "(unknown)", supported[0] ? supported : "(none)", dir);
    decline(why);
    return;
  }
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s/" LIBRARY, dir, pick);
  // One Go runtime per process: if jax already loaded another of our builds,
  // loading this one would start a second.
  for (int i = 0; i < n; i++) {
    if (names[i] == pick) continue;
    char other[PATH_MAX];
    snprintf(other, sizeof other, "%s/%s/" LIBRARY, dir, names[i]);
    void* h = dlopen(other, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    dlclose(h);
    snprintf(why, sizeof why,
             "jax already loaded %s, and TensorFlow %s needs %s, which would start a second Go runtime in the process: "
             "offering no device (import tensorflow before jax, or set METALPLUG_LIBRARY for jax to %s)",
             other, running, path, path);
    decline(why);
    return;
  }
  build = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!build) {
    snprintf(why, sizeof why, "cannot load %s (%s): offering no device; reinstall metalplug", path, dlerror());
    decline(why);
    return;
  }
  snprintf(build_path, sizeof build_path, "%s", path);
}

static void* forward(const char* name) {
  pthread_once(&once, choose);
  return build ? dlsym(build, name) : NULL;
}

// metalplug_loader_build names the build the loader loaded, or returns NULL
// when it declined or has not been asked yet; jax_plugins.metalplug calls it.
EXPORT const char* metalplug_loader_build(void) { return build ? build_path : NULL; }

EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams* params, TF_Status* status) {
  void (*fn)(SE_PlatformRegistrationParams*, TF_Status*) = forward("SE_InitPlugin");
  if (fn) {
    fn(params, status);
    return;
  }
  declined_platform(params);
}

EXPORT void TF_InitKernel(void) {
  void (*fn)(void) = forward("TF_InitKernel");
  if (fn) fn();  // declined: no kernels, so nothing is placed on the device type
}

EXPORT void TF_InitGraph(TP_OptimizerRegistrationParams* params, TF_Status* status) {
  void (*fn)(TP_OptimizerRegistrationParams*, TF_Status*) = forward("TF_InitGraph");
  if (fn) {
    fn(params, status);
    return;
  }
  declined_optimizer(params);
}

EXPORT void TF_InitProfiler(TF_ProfilerRegistrationParams* params, TF_Status* status) {
  void (*fn)(TF_ProfilerRegistrationParams*, TF_Status*) = forward("TF_InitProfiler");
  if (fn) {
    fn(params, status);
    return;
  }
  declined_profiler(params);
}
