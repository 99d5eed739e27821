//===- mpi_process.cpp - MPI start-up, shut-down and abort ----------------===//

#include "mpi_process.h"

#include <cstdio>
#include <cstdlib>
#include <string>

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
    // Open MPI's libnbc reduces by binomial tree below 4 ranks or in place,
    // so every byte crosses twice; the ring halves tensor-parallel
    // all-reduce time (README, Benchmarks). The user's setting wins.
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
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

namespace {

/// The check cannot run: say so once, from the rank that knows why.
void livenessOff(int rank, const std::string &why) {
  std::fprintf(stderr,
               "parc: rank %d: warning: %s; the liveness check is off for "
               "this job, so a stopped or dead peer is reported only after "
               "the collective timeout (PARC_RT_TIMEOUT_S)\n",
               rank, why.c_str());
}

} // namespace

parc_rt_status_t startLiveness(MPI_Comm world, Liveness &out) {
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  if (size == 1)
    return PARC_RT_OK;
  // Rank 0's limit holds for every rank, so all agree on whether to watch.
  LivenessEndpoint at;
  std::string why;
  if (rank == 0 && (at.seconds = livenessFromEnv()) > 0 &&
      out.serve(size, at.seconds, at) != PARC_RT_OK) {
    why = parc_rt_last_error();
    at.seconds = 0;
  }
  int rc = MPI_Bcast(&at, int(sizeof(at)), MPI_BYTE, 0, world);
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, "init: liveness");
  int joined = at.seconds > 0;
  if (joined && rank != 0 && out.join(rank, at) != PARC_RT_OK) {
    why = parc_rt_last_error();
    joined = 0;
  }
  // Every rank reached rank 0, or no one is watched.
  rc = MPI_Allreduce(MPI_IN_PLACE, &joined, 1, MPI_INT, MPI_MIN, world);
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, "init: liveness");
  if (!joined)
    out.stop(/*goodbye=*/false);
  if (!why.empty())
    livenessOff(rank, why);
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
