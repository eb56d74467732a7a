// gleam-run --doctor: the installation (Gleam's libraries present and
// their dependencies resolved), the program (the CUDA libraries it loads,
// whether Gleam stands in for each, the functions it imports that Gleam
// refuses or lacks, a statically linked runtime's driver), and the server (a
// session opened by gleam-probe through the interposer: the GPU, the
// round trip, the upload rate; a refused token or an unreachable server
// explained). Static checks read ELF files with binutils (nm, objdump) and
// ldd, as a person would.
#include "tools/gleam-run/doctor.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace gleam::tools::doctor {

namespace {

/// A library Gleam stands in for: its SONAME, the spec naming its
/// exports (<lib dir>/../interpose/<spec>_symbols.txt, _unsupported.txt)
/// and where it sits under the lib directory.
struct surface {
  const char* soname;
  const char* spec;
  const char* subdir;
};

constexpr surface surfaces[] = {
  {"libcudart.so.13", "cudart", ""},        {"libcuda.so.1", "cuda", "driver/"},
  {"libcublas.so.13", "cublas", ""},        {"libcublasLt.so.13", "cublasLt", ""},
  {"libcurand.so.10", "curand", ""},        {"libcufft.so.12", "cufft", ""},
  {"libcudnn.so.9", "cudnn", ""},           {"libnvidia-ml.so.1", "nvml", ""},
  {"libcusolver.so.12", "cusolver", ""},    {"libcusparse.so.12", "cusparse", ""},
};

/// NVIDIA libraries Gleam does not stand in for, by SONAME prefix: those
/// that only run on this machine's CPU are fine.
struct other_library {
  const char* prefix;
  bool cpu_only;
  const char* what;
};

constexpr other_library others[] = {
  {"libnvrtc", true, "the runtime compiler runs on this machine's CPU"},
  {"libnvJitLink", true, "the JIT linker runs on this machine's CPU"},
  {"libnvToolsExt", true, "profiler markers (no-ops without a profiler)"},
  {"libnvtx", true, "profiler markers (no-ops without a profiler)"},
  {"libcudart.so", false, "a CUDA runtime other than 13: Gleam serves CUDA 13 programs"},
  {"libcublas", false, "a cuBLAS other than 13 is not remoted"},
  {"libcudnn", false, "a cuDNN other than 9 is not remoted"},
  {"libcusparseLt", false, "cuSPARSELt is not remoted"},
  {"libcusolverMg", false, "multi-GPU cuSOLVER is not remoted"},
  {"libcusolver", false, "this cuSOLVER is not remoted"},
  {"libcusparse", false, "this cuSPARSE is not remoted"},
  {"libcufft", false, "this cuFFT is not remoted"},
  {"libcurand", false, "this cuRAND is not remoted"},
  {"libnccl", false, "NCCL is not remoted: multi-GPU collectives fail"},
  {"libcupti", false, "CUPTI (profiling) is not remoted"},
  {"libnvjpeg", false, "nvJPEG is not remoted"},
  {"libnpp", false, "NPP is not remoted"},
  {"libcufile", false, "GPUDirect Storage is not remoted"},
};

class report {
public:
  void ok(const std::string& s) {
    std::printf("ok    %s\n", s.c_str());
  }
  void warn(const std::string& s) {
    std::printf("warn  %s\n", s.c_str());
  }
  void fail(const std::string& s) {
    std::printf("FAIL  %s\n", s.c_str());
    ++failures;
  }
  int failures = 0;
};

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

/// Runs `command` with /bin/sh; its stdout and exit status. Its stderr
/// goes to `errors` (a path; default: discarded).
std::string capture(const std::string& command, int* status,
                    const std::string& errors = "/dev/null") {
  std::string out;
  FILE* p = ::popen((command + " 2>" + quoted(errors)).c_str(), "r");
  if (p == nullptr) {
    *status = -1;
    return out;
  }
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;)
    out.append(buf, n);
  auto rc = ::pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      out.push_back(line);
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool readable(const std::string& path) {
  return ::access(path.c_str(), R_OK) == 0;
}

/// `name` as the shell would find it (PATH), or empty.
std::string resolve(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return readable(name) ? name : std::string{};
  int status = 0;
  auto out = lines(capture("command -v " + quoted(name), &status));
  return status == 0 && !out.empty() ? out.front() : std::string{};
}

/// ldd's SONAME -> path ("not found" when unresolved) of an ELF object.
std::map<std::string, std::string> needed(const std::string& object) {
  std::map<std::string, std::string> out;
  int status = 0;
  for (const auto& line : lines(capture("ldd " + quoted(object), &status))) {
    std::istringstream words{line};
    std::string name, arrow, path;
    words >> name >> arrow;
    if (arrow != "=>")
      continue;
    std::getline(words, path);
    auto first = path.find_first_not_of(' ');
    path = first == std::string::npos ? "" : path.substr(first);
    out[name] = starts_with(path, "not found") ? "not found" : path.substr(0, path.find(' '));
  }
  return out;
}

/// The dynamic symbols `object` imports: name -> the version it asks for
/// (the SONAME for the CUDA libraries' versioned symbols; empty when
/// unversioned).
std::map<std::string, std::string> imports(const std::string& object) {
  std::map<std::string, std::string> out;
  int status = 0;
  for (const auto& line : lines(capture("nm -D --undefined-only " + quoted(object), &status))) {
    std::istringstream words{line};
    std::string type, name;
    words >> type >> name;
    if (name.empty())
      continue;
    auto at = name.find('@');
    out[name.substr(0, at)] = at == std::string::npos ? "" : name.substr(name.find_first_not_of('@', at));
  }
  return out;
}

/// Whether `object` carries device code (a .nv_fatbin section).
bool has_device_code(const std::string& object) {
  int status = 0;
  return capture("objdump -h " + quoted(object), &status).find(".nv_fatbin")
         != std::string::npos;
}

/// One surface's exports and refusals, from the generated name lists.
struct surface_lists {
  bool present = false;
  std::set<std::string> exported;
  std::map<std::string, std::string> unsupported; // name -> reason
};

surface_lists lists_of(const options& opt, const surface& s) {
  surface_lists out;
  auto dir = opt.lib_dir + "/../interpose/";
  std::ifstream names{dir + s.spec + "_symbols.txt"};
  for (std::string line; std::getline(names, line);)
    if (!line.empty())
      out.exported.insert(line);
  std::ifstream refused{dir + s.spec + "_unsupported.txt"};
  for (std::string line; std::getline(refused, line);) {
    auto tab = line.find('\t');
    if (!line.empty())
      out.unsupported[line.substr(0, tab)] = tab == std::string::npos ? "" : line.substr(tab + 1);
  }
  out.present = !out.exported.empty();
  return out;
}

void check_installation(const options& opt, report& r) {
  for (const auto& s : surfaces) {
    auto path = opt.lib_dir + "/" + s.subdir + s.soname;
    if (!readable(path)) {
      // The runtime and the driver surface are required; the libraries
      // are optional parts of a bundle.
      if (std::string{s.spec} == "cudart" || std::string{s.spec} == "cuda")
        r.fail("Gleam's " + std::string{s.soname} + " is missing at " + path +
               ": reinstall the bundle (deploy/bundle.sh)");
      continue;
    }
    for (const auto& [name, where] : needed(path))
      if (where == "not found")
        r.fail(path + " needs " + name + ", which the dynamic linker does not find: "
               "reinstall the bundle with its lib/ directory");
  }
  if (!readable(opt.bin_dir + "/gleam-probe"))
    r.fail("gleam-probe is missing next to gleam-run (" + opt.bin_dir + "): reinstall the bundle");
  if (r.failures == 0)
    r.ok("Gleam's libraries in " + opt.lib_dir + " and their dependencies are all there");
}

/// The ELF objects whose CUDA use decides a run of `program`: the
/// program and its own (non-system) libraries, or for a Python
/// interpreter the libraries of its PyTorch.
std::vector<std::string> objects_of(const std::vector<std::string>& program, report& r) {
  std::vector<std::string> out;
  auto exe = resolve(program.front());
  if (exe.empty()) {
    r.fail("program '" + program.front() + "' not found");
    return out;
  }
  std::string interpreter = exe;
  {
    std::ifstream in{exe};
    std::string first;
    std::getline(in, first);
    if (starts_with(first, "#!")) {
      std::istringstream words{first.substr(2)};
      words >> interpreter;
      std::string arg;
      if (basename_of(interpreter) == "env" && words >> arg)
        interpreter = resolve(arg);
    }
  }
  if (starts_with(basename_of(interpreter), "python")) {
    int status = 0;
    auto dir = lines(capture(quoted(interpreter) +
                               " -c 'import os, torch; print(os.path.join(os.path.dirname("
                               "torch.__file__), \"lib\"))'",
                             &status));
    if (status != 0 || dir.empty()) {
      r.ok("a Python program without PyTorch: the CUDA libraries it loads are not known "
           "before it runs");
      return out;
    }
    for (const auto& so : lines(capture("ls " + quoted(dir.front()) + "/*.so*", &status)))
      out.push_back(so);
    r.ok("Python program: checking the CUDA libraries of its PyTorch (" + dir.front() + ")");
    return out;
  }
  out.push_back(exe);
  for (const auto& [name, path] : needed(exe))
    if (!path.empty() && path != "not found" && !starts_with(path, "/lib")
        && !starts_with(path, "/usr/lib"))
      out.push_back(path);
  return out;
}

void check_program(const options& opt, report& r) {
  auto objects = objects_of(opt.program, r);
  if (objects.empty())
    return;
  std::map<std::string, surface_lists> lists;
  for (const auto& s : surfaces)
    lists[s.soname] = lists_of(opt, s);
  std::set<std::string> sonames;
  bool cudart = false, device_code = false;
  for (const auto& o : objects) {
    auto deps = needed(o);
    for (const auto& [name, path] : deps) {
      sonames.insert(name);
      cudart = cudart || name == "libcudart.so.13";
    }
    device_code = device_code || has_device_code(o);
  }
  if (device_code && !cudart) {
    if (readable(opt.lib_dir + "/driver/libcuda.so.1"))
      r.ok("links the CUDA runtime statically (nvcc's default): it reaches the GPU through "
           "libcuda.so.1, which Gleam stands in for");
    else
      r.fail("links the CUDA runtime statically (nvcc's default) and reaches the GPU through "
             "libcuda.so.1, which this Gleam bundle does not have");
  }
  for (const auto& name : sonames) {
    if (auto i = lists.find(name); i != lists.end()) {
      if (readable(opt.lib_dir + "/" + name) || readable(opt.lib_dir + "/driver/" + name))
        r.ok("loads " + name + ": Gleam stands in for it");
      else
        r.fail("loads " + name + ", which this Gleam bundle does not have: its calls would reach "
               "no GPU");
      continue;
    }
    for (const auto& o : others) {
      if (!starts_with(name, o.prefix))
        continue;
      if (o.cpu_only)
        r.ok("loads " + name + ": " + o.what);
      else
        r.warn("loads " + name + ": " + o.what);
      break;
    }
  }
  // Imported functions Gleam refuses (they fail with the library's "not
  // supported" status if called) or does not export at all (the program
  // would not load).
  std::map<std::string, std::vector<std::string>> refused, missing;
  for (const auto& o : objects) {
    auto deps = needed(o);
    for (const auto& [name, version] : imports(o)) {
      for (const auto& [soname, l] : lists) {
        // A versioned import names its library; an unversioned one (the
        // driver's, NVML's) may come from any library the object loads.
        if (!l.present || deps.count(soname) == 0 || (!version.empty() && version != soname))
          continue;
        if (l.unsupported.count(name) != 0)
          refused[soname].push_back(name);
        else if (version == soname && l.exported.count(name) == 0)
          missing[soname].push_back(name);
      }
    }
  }
  for (auto& [soname, names] : refused) {
    std::set<std::string> unique(names.begin(), names.end());
    std::string shown;
    size_t n = 0;
    for (const auto& name : unique)
      if (n++ < 8)
        shown += (shown.empty() ? "" : ", ") + name;
    r.warn(soname + ": the program imports " + std::to_string(unique.size()) +
           " function(s) Gleam does not remote (a call fails with the library's 'not "
           "supported' status and names the function): " + shown +
           (unique.size() > 8 ? ", ..." : "") + "; first reason: " +
           lists[soname].unsupported[*unique.begin()]);
  }
  for (auto& [soname, names] : missing)
    r.fail(soname + ": the program imports " + names.front() +
           (names.size() > 1 ? " and " + std::to_string(names.size() - 1) + " more" : "") +
           ", which Gleam's " + soname + " does not export: the program would not load");
}

/// The probe's "key value" lines.
std::map<std::string, std::string> parse(const std::string& out) {
  std::map<std::string, std::string> kv;
  for (const auto& line : lines(out)) {
    auto space = line.find(' ');
    if (space != std::string::npos)
      kv[line.substr(0, space)] = line.substr(space + 1);
  }
  return kv;
}

void check_server(const options& opt, report& r) {
  int status = 0;
  auto err_file = std::string{"/tmp/gleam-doctor-"} + std::to_string(::getpid()) + ".err";
  auto out = capture("timeout " + std::to_string(opt.probe_timeout_s) + " " +
                       quoted(opt.bin_dir + "/gleam-run") + " -- " +
                       quoted(opt.bin_dir + "/gleam-probe"),
                     &status, err_file);
  std::string err;
  {
    std::ifstream in{err_file};
    std::stringstream s;
    s << in.rdbuf();
    err = s.str();
  }
  std::remove(err_file.c_str());
  auto kv = parse(out);
  if (status == 0 && kv.count("gpu") != 0) {
    auto gib = std::stod(kv["memory"]) / (1024.0 * 1024 * 1024);
    char line[512];
    std::snprintf(line, sizeof(line), "server: %s, %.0f GiB, compute %s, CUDA driver %s",
                  kv["gpu"].c_str(), gib, kv["compute"].c_str(), kv["driver"].c_str());
    r.ok(line);
    auto rtt_ms = std::stod(kv["rtt_us"]) / 1000.0;
    auto mbit = std::stod(kv["upload_mbit_s"]);
    std::snprintf(line, sizeof(line),
                  "link: %.2f ms a round trip, %.0f Mbit/s upload of new weights", rtt_ms, mbit);
    if (rtt_ms > 10 || mbit < 100)
      r.warn(std::string{line} + " (slow: a cold model load and every synchronizing call will "
                                 "take longer; weights cached on the server load fast)");
    else
      r.ok(line);
    return;
  }
  // Why no session: the probe's failed call and what the client logged.
  std::string why = kv.count("error") != 0 ? kv["error"] : "no answer";
  if (status == 124)
    why = "no session within " + std::to_string(opt.probe_timeout_s) + " s";
  std::string client;
  for (const auto& line : lines(err))
    if (line.find("gleam") != std::string::npos)
      client += "\n      " + line;
  std::string hint;
  if (err.find("token") != std::string::npos)
    hint = "; the server refused this client's token: set GLEAM_TOKEN (or [client] auth-token) "
           "to the token of the server's [node] auth-token";
  else if (err.find("no server") != std::string::npos || err.find("connect") != std::string::npos
           || err.find("reach") != std::string::npos)
    hint = "; no Gleam server answered: check GLEAM_SERVER / GLEAM_SCHEDULER (or the config's "
           "[client] section) and that gleamd runs there";
  r.fail("no GPU session through Gleam: " + why + hint + client);
}

} // namespace

int run(const options& opt) {
  report r;
  std::printf("gleam doctor: what a run through Gleam needs, checked from this machine\n");
  check_installation(opt, r);
  if (!opt.program.empty())
    check_program(opt, r);
  check_server(opt, r);
  if (r.failures == 0)
    std::printf("doctor: a run would work\n");
  else
    std::printf("doctor: %d problem(s); a run would fail\n", r.failures);
  return r.failures == 0 ? 0 : 1;
}

} // namespace gleam::tools::doctor
