#include <cuda_runtime.h>

// launch tb_k0 stage O grid 1x1x1 block 2x2x32

extern "C" __global__ void __launch_bounds__(128) tb_k0(float *__restrict__ T_I, float *__restrict__ T_Wt, float *__restrict__ T_O) {
  {
    const int v_O_n_f_0_fused = blockIdx.z;
    {
      const int v_O_y_0 = blockIdx.y;
      {
        const int v_O_x_0 = blockIdx.x;
        for (int v_O_f_1 = 0; v_O_f_1 < 1; ++v_O_f_1) {
          for (int v_O_y_1 = 0; v_O_y_1 < 1; ++v_O_y_1) {
            for (int v_O_x_1 = 0; v_O_x_1 < 1; ++v_O_x_1) {
              {
                const int v_O_f_2 = threadIdx.z;
                {
                  const int v_O_y_2 = threadIdx.y;
                  {
                    const int v_O_x_2 = threadIdx.x;
                    const int m_O_local_0 = v_O_n_f_0_fused;
                    const int m_O_local_1 = ((v_O_f_1 * 32) + v_O_f_2);
                    const int m_O_local_2 = ((((v_O_y_0 + v_O_y_1) * 2) + v_O_y_2) * 7);
                    const int m_O_local_3 = ((((v_O_x_0 + v_O_x_1) * 2) + v_O_x_2) * 7);
                    {
                      float T_O_local[49];
                      for (int v_O_local_n = 0; v_O_local_n < 1; ++v_O_local_n) {
                        for (int v_O_local_f = 0; v_O_local_f < 1; ++v_O_local_f) {
                          #pragma unroll
                          for (int v_O_local_y = 0; v_O_local_y < 7; ++v_O_local_y) {
                            #pragma unroll
                            for (int v_O_local_x = 0; v_O_local_x < 7; ++v_O_local_x) {
                              T_O_local[((((v_O_local_n * 49) + (v_O_local_f * 49)) + (v_O_local_y * 7)) + v_O_local_x)] = 0.0f;
                            }
                          }
                        }
                      }
                      for (int v_O_local_rc_0 = 0; v_O_local_rc_0 < 16; ++v_O_local_rc_0) {
                        for (int v_O_local_ry_0 = 0; v_O_local_ry_0 < 1; ++v_O_local_ry_0) {
                          #pragma unroll
                          for (int v_O_local_rx_0 = 0; v_O_local_rx_0 < 3; ++v_O_local_rx_0) {
                            for (int v_O_local_rc_1 = 0; v_O_local_rc_1 < 1; ++v_O_local_rc_1) {
                              #pragma unroll
                              for (int v_O_local_ry_1 = 0; v_O_local_ry_1 < 3; ++v_O_local_ry_1) {
                                for (int v_O_local_rx_1 = 0; v_O_local_rx_1 < 1; ++v_O_local_rx_1) {
                                  for (int v_O_local_n = 0; v_O_local_n < 1; ++v_O_local_n) {
                                    for (int v_O_local_f = 0; v_O_local_f < 1; ++v_O_local_f) {
                                      #pragma unroll
                                      for (int v_O_local_y = 0; v_O_local_y < 7; ++v_O_local_y) {
                                        #pragma unroll
                                        for (int v_O_local_x = 0; v_O_local_x < 7; ++v_O_local_x) {
                                          T_O_local[((((v_O_local_n * 49) + (v_O_local_f * 49)) + (v_O_local_y * 7)) + v_O_local_x)] += (((((((m_O_local_2 + v_O_local_y) + ((v_O_local_ry_0 * 3) + v_O_local_ry_1)) >= 1) && (((m_O_local_2 + v_O_local_y) + ((v_O_local_ry_0 * 3) + v_O_local_ry_1)) < 15)) && (((m_O_local_3 + v_O_local_x) + (v_O_local_rx_0 + v_O_local_rx_1)) >= 1)) && (((m_O_local_3 + v_O_local_x) + (v_O_local_rx_0 + v_O_local_rx_1)) < 15)) ? (T_I[(((((m_O_local_0 + v_O_local_n) * 3136) + ((v_O_local_rc_0 + v_O_local_rc_1) * 196)) + ((((m_O_local_2 + v_O_local_y) + ((v_O_local_ry_0 * 3) + v_O_local_ry_1)) - 1) * 14)) + (((m_O_local_3 + v_O_local_x) + (v_O_local_rx_0 + v_O_local_rx_1)) - 1))] * T_Wt[(((((m_O_local_1 + v_O_local_f) * 144) + ((v_O_local_rc_0 + v_O_local_rc_1) * 9)) + (((v_O_local_ry_0 * 3) + v_O_local_ry_1) * 3)) + (v_O_local_rx_0 + v_O_local_rx_1))]) : 0.0f);
                                        }
                                      }
                                    }
                                  }
                                }
                              }
                            }
                          }
                        }
                      }
                      for (int v_O_f_3 = 0; v_O_f_3 < 1; ++v_O_f_3) {
                        #pragma unroll
                        for (int v_O_y_3 = 0; v_O_y_3 < 7; ++v_O_y_3) {
                          #pragma unroll
                          for (int v_O_x_3 = 0; v_O_x_3 < 7; ++v_O_x_3) {
                            T_O[((((v_O_n_f_0_fused * 6272) + ((((v_O_f_1 * 32) + v_O_f_2) + v_O_f_3) * 196)) + ((((((v_O_y_0 + v_O_y_1) * 2) + v_O_y_2) * 7) + v_O_y_3) * 14)) + (((((v_O_x_0 + v_O_x_1) * 2) + v_O_x_2) * 7) + v_O_x_3))] = T_O_local[(((((v_O_n_f_0_fused - m_O_local_0) * 49) + (((((v_O_f_1 * 32) + v_O_f_2) + v_O_f_3) - m_O_local_1) * 49)) + (((((((v_O_y_0 + v_O_y_1) * 2) + v_O_y_2) * 7) + v_O_y_3) - m_O_local_2) * 7)) + ((((((v_O_x_0 + v_O_x_1) * 2) + v_O_x_2) * 7) + v_O_x_3) - m_O_local_3))];
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

extern "C" int tb_cuda_device_count(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  return e == cudaSuccess ? n : -(int)e;
}

extern "C" const char *tb_cuda_error_string(int code) {
  return cudaGetErrorString((cudaError_t)code);
}

static cudaError_t tb_launch(float **d) {
  cudaError_t e;
  tb_k0<<<dim3(1, 1, 1), dim3(2, 2, 32)>>>(d[0], d[1], d[2]);
  e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  return cudaSuccess;
}

static cudaError_t tb_setup(void) {
  return cudaSuccess;
}

static cudaError_t tb_run_impl(float **host, const long *sizes, int nbufs, int repeat,
                               double *times_ms, float **d, cudaEvent_t *ev) {
  cudaError_t e;
  if (nbufs != 3 || repeat < 0) return cudaErrorInvalidValue;
  if (sizes[0] != 3136L) return cudaErrorInvalidValue;
  if (sizes[1] != 4608L) return cudaErrorInvalidValue;
  if (sizes[2] != 6272L) return cudaErrorInvalidValue;
  e = cudaMalloc((void **)&d[0], 3136UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMalloc((void **)&d[1], 4608UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMalloc((void **)&d[2], 6272UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMemcpy(d[0], host[0], 3136UL * sizeof(float), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return e;
  e = cudaMemcpy(d[1], host[1], 4608UL * sizeof(float), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return e;
  if ((e = cudaEventCreate(&ev[0])) != cudaSuccess) return e;
  if ((e = cudaEventCreate(&ev[1])) != cudaSuccess) return e;
  if ((e = tb_setup()) != cudaSuccess) return e;
  if ((e = tb_launch(d)) != cudaSuccess) return e;
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return e;
  for (int r = 0; r < repeat; ++r) {
    float ms = 0.0f;
    if ((e = cudaEventRecord(ev[0], 0)) != cudaSuccess) return e;
    if ((e = tb_launch(d)) != cudaSuccess) return e;
    if ((e = cudaEventRecord(ev[1], 0)) != cudaSuccess) return e;
    if ((e = cudaEventSynchronize(ev[1])) != cudaSuccess) return e;
    if ((e = cudaEventElapsedTime(&ms, ev[0], ev[1])) != cudaSuccess) return e;
    times_ms[r] = (double)ms;
  }
  e = cudaMemcpy(host[2], d[2], 6272UL * sizeof(float), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return e;
  return cudaSuccess;
}

extern "C" int tb_cuda_run(float **host_bufs, const long *sizes, int nbufs, int repeat,
                          double *times_ms) {
  float *d[3] = {0};
  cudaEvent_t ev[2] = {0, 0};
  cudaError_t e = tb_run_impl(host_bufs, sizes, nbufs, repeat, times_ms, d, ev);
  for (int i = 0; i < 3; ++i) {
    if (d[i]) cudaFree(d[i]);
  }
  if (ev[0]) cudaEventDestroy(ev[0]);
  if (ev[1]) cudaEventDestroy(ev[1]);
  return (int)e;
}
