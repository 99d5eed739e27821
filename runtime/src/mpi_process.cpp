//===- mpi_process.cpp - MPI start-up, shut-down and abort ----------------===//

#include "mpi_process.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace parc::rt {

parc_rt_status_t mpiFail(parc_rt_status_t status, int code, const char *what) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return fail(status, "%s: MPI error: %s", what, text);
}

parc_rt_status_t startMpi(int *argc, char ***argv, bool &ownsMpi,
                          MPI_Comm &world) {
  ownsMpi = false;
  world = MPI_COMM_NULL;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return fail(PARC_RT_COMM_ERROR, "init: MPI was already finalized");
  if (!initialized) {
    // FUNNELED: kernels may use OpenMP threads, but only the thread that
    // called init talks to MPI.
    int provided = 0;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS)
      return mpiFail(PARC_RT_COMM_ERROR, rc, "init");
    ownsMpi = true;
  }
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &world);
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, "init");
  MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
  return PARC_RT_OK;
}

parc_rt_status_t startLiveness(MPI_Comm world, Liveness &out) {
  struct Record {
    int pid;
    char node[188];
  };
  Record mine{int(getpid()), {}};
  const std::string node = Liveness::nodeIdentity();
  std::strncpy(mine.node, node.c_str(), sizeof(mine.node) - 1);
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  std::vector<Record> all(static_cast<size_t>(size));
  int rc = MPI_Allgather(&mine, int(sizeof(Record)), MPI_BYTE, all.data(),
                         int(sizeof(Record)), MPI_BYTE, world);
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, "init: liveness");
  std::vector<int> pids;
  std::vector<std::string> nodes;
  for (const Record &r : all) {
    pids.push_back(r.pid);
    nodes.emplace_back(r.node, strnlen(r.node, sizeof(r.node)));
  }
  out.configure(rank, pids, nodes, livenessFromEnv());
  return PARC_RT_OK;
}

parc_rt_status_t finishMpi(bool ownsMpi) {
  int rc = ownsMpi ? MPI_Finalize() : MPI_SUCCESS;
  return rc == MPI_SUCCESS ? PARC_RT_OK
                           : mpiFail(PARC_RT_COMM_ERROR, rc, "finalize");
}

} // namespace parc::rt

extern "C" {

// MPI_Abort ends every rank; on the cuda backend the driver reclaims the
// device (and any NCCL kernel still spinning) with the process, so nothing
// here can hang.
void parc_rt_abort(parc_rt_context_t *ctx, parc_rt_status_t status) {
  int rank = parc_rt_context_rank(ctx), initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!ctx && initialized && !finalized)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *message = parc_rt_last_error();
  if (!message || !*message)
    message = parc_rt_status_string(status);
  if (rank >= 0)
    std::fprintf(stderr, "parc: rank %d: %s\n", rank, message);
  else
    std::fprintf(stderr, "parc: %s\n", message);
  std::fflush(stderr);
  const int code = status == PARC_RT_OK ? 1 : int(status);
  if (initialized && !finalized)
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

} // extern "C"
