/* OpenMPI's MPI_Allreduce (float32 SUM) on the sizes troupe's
 * bench/allreduce_cluster measures, as its peer in the same run
 * (bench/allreduce_peers.sh builds this with mpicc and starts it with
 * mpirun, choosing the transport with --mca btl).
 *
 *   mpi_allreduce LABEL BYTES[,BYTES...] [SECONDS_PER_SIZE]
 *
 * Per size: 5 warm-up calls, then calls until SECONDS_PER_SIZE (0.5) pass
 * (at least 10, at most 2000; rank 0 decides, every rank follows), each
 * preceded by a barrier and timed on every rank; the figure is the median
 * over calls of the slowest rank's time, as troupe's bench reports it.
 * Every result is checked. Rank 0 prints one row per size in troupe's
 * format: ROW,openmpi,LABEL,ranks,bytes,median_us,algbw_GBps,busbw_GBps,0,0 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc < 3) {
    if (rank == 0)
      fprintf(stderr, "usage: mpi_allreduce LABEL BYTES[,BYTES...] [SECONDS_PER_SIZE]\n");
    MPI_Finalize();
    return 2;
  }
  const double budget = argc > 3 ? atof(argv[3]) : 0.5;
  char* sizes = strdup(argv[2]);
  for (char* item = strtok(sizes, ","); item != NULL; item = strtok(NULL, ",")) {
    const long bytes = atol(item);
    const long count = bytes / 4;
    float* data = malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
    int calls = 0;
    const int max_calls = 2000;
    double* mine = malloc(max_calls * sizeof(double));
    double* slowest = malloc(max_calls * sizeof(double));
    const double start = MPI_Wtime();
    for (int i = -5; i < max_calls; ++i) {
      for (long k = 0; k < count; ++k)
        data[k] = (float)(rank + 1) + (float)(k % 7);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, data, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      const double t1 = MPI_Wtime();
      for (long k = 0; k < count; ++k)
        if (data[k] != (float)(ranks * (ranks + 1) / 2) + (float)(ranks * (k % 7))) {
          fprintf(stderr, "mpi_allreduce: wrong sum at element %ld of %ld bytes on rank %d\n", k, bytes, rank);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      if (i < 0)
        continue;
      mine[calls++] = t1 - t0;
      int more = calls < 10 || (calls < max_calls && MPI_Wtime() - start < budget);
      MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (!more)
        break;
    }
    MPI_Reduce(mine, slowest, calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      qsort(slowest, (size_t)calls, sizeof(double), compare);
      const double median = slowest[calls / 2];
      const double algbw = (double)bytes / median;
      const double busbw = algbw * 2.0 * (ranks - 1) / ranks;
      printf("ROW,openmpi,%s,%d,%ld,%.1f,%.3f,%.3f,0,0\n", argv[1], ranks, bytes, median * 1e6, algbw / 1e9,
             busbw / 1e9);
      fflush(stdout);
    }
    free(mine);
    free(slowest);
    free(data);
  }
  free(sizes);
  MPI_Finalize();
  return 0;
}
