/*
 * ct_ocl_dll.c - OpenCL on Windows without an import library: OpenCL.dll
 * (the ICD loader that GPU drivers install) is loaded at the first
 * clGetPlatformIDs call, and every OpenCL function the engine calls is a
 * one-instruction thunk jumping through a pointer filled from the DLL by
 * GetProcAddress. A machine without OpenCL.dll (or with one lacking a
 * function the engine uses) reports no platform, so the engine computes on
 * the C reference as on a Linux machine without an ICD. Built only for
 * Windows (x86-64); Linux links libOpenCL.
 */
#include "config.h"

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <windows.h>

/* Every OpenCL entry point the engine and the client use, but the guard
 * clGetPlatformIDs below. */
#define CT_CL_FUNCS(X) \
	X(clBuildProgram) X(clCreateBuffer) X(clCreateCommandQueue) \
	X(clCreateContext) X(clCreateKernel) X(clCreateProgramWithBinary) \
	X(clCreateProgramWithSource) X(clEnqueueFillBuffer) \
	X(clEnqueueNDRangeKernel) X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer) \
	X(clFinish) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clGetKernelInfo) \
	X(clGetKernelWorkGroupInfo) X(clGetMemObjectInfo) X(clGetPlatformInfo) \
	X(clGetProgramBuildInfo) X(clGetProgramInfo) X(clReleaseCommandQueue) \
	X(clReleaseContext) X(clReleaseKernel) X(clReleaseMemObject) \
	X(clReleaseProgram) X(clSetKernelArg)

/* Until the DLL is loaded every thunk lands here (none is reachable
 * without a platform; this keeps a stray call from jumping to NULL). */
static cl_int not_loaded(void)
{
	return CL_PLATFORM_NOT_FOUND_KHR;
}

#define CT_CL_PTR(name) __attribute__((used)) void *ct_dll_##name = (void *)not_loaded;
CT_CL_FUNCS(CT_CL_PTR)

#define CT_CL_THUNK(name)                                             \
	__asm__(".text\n\t.globl " #name "\n\t.def " #name ";\t.scl 2;\t.type 32;\t.endef\n" \
		#name ":\n\tjmp *ct_dll_" #name "(%rip)\n");
CT_CL_FUNCS(CT_CL_THUNK)

typedef cl_int(CL_API_CALL *get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);
static get_platforms_fn dll_get_platforms;

/* Load OpenCL.dll once and resolve every function: 1 if all are there. */
static int load(void)
{
	static INIT_ONCE once = INIT_ONCE_STATIC_INIT;
	static int ok;
	BOOL pending;
	HMODULE m;
	FARPROC f;

	if (!InitOnceBeginInitialize(&once, 0, &pending, NULL))
		return 0;
	if (!pending)
		return ok;
	m = LoadLibraryW(L"OpenCL.dll");
	ok = m != NULL;
#define CT_CL_LOAD(name)                                 \
	f = ok ? GetProcAddress(m, #name) : NULL;         \
	if (f == NULL)                                    \
		ok = 0;                                   \
	else                                              \
		ct_dll_##name = (void *)f;
	CT_CL_FUNCS(CT_CL_LOAD)
	f = ok ? GetProcAddress(m, "clGetPlatformIDs") : NULL;
	ok = ok && f != NULL;
	if (ok)
		dll_get_platforms = (get_platforms_fn)(void (*)(void))f;
	InitOnceComplete(&once, 0, NULL);
	return ok;
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint n, cl_platform_id *ids, cl_uint *count)
{
	if (!load()) {
		if (count != NULL)
			*count = 0;
		return CL_PLATFORM_NOT_FOUND_KHR;
	}
	return dll_get_platforms(n, ids, count);
}
