/* Gleam's declaration of the NVML ABI (libnvidia-ml.so.1, NVML API version
 * 13, driver 580) for both sides of the remoted NVML: the CUDA toolkit ships
 * no nvml.h, so interpose/spec/nvml.spec carries the prototypes and this
 * header the types they name. Complete where Gleam moves the bytes (the
 * types of the remoted queries: sizes and layouts as the NVML reference
 * documents them), incomplete or enumerator-less where a type only appears
 * in the prototype of an unsupported function. C++ only (enums with a fixed
 * underlying type: every NVML enum is an int on the ABI).
 */
#ifndef GLEAM_WIRE_NVML_H
#define GLEAM_WIRE_NVML_H

#ifdef __cplusplus
extern "C" {
#endif

/* --- status --------------------------------------------------------------- */

typedef enum nvmlReturn_enum : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

/* --- constants ------------------------------------------------------------ */

#define NVML_API_VERSION 13
#define NVML_INIT_FLAG_NO_GPUS (1 << 0)
#define NVML_INIT_FLAG_NO_ATTACH (1 << 1)
#define NVML_INIT_FLAG_FORCE_INIT (1 << 2)
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
/* A versioned struct's version word: its size, and the version in the top byte. */
#define NVML_STRUCT_VERSION(data, ver) \
  (unsigned int)(sizeof(nvml##data##_v##ver##_t) | (unsigned int)((ver) << 24U))

/* --- handles -------------------------------------------------------------- */

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlUnit_st* nvmlUnit_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

/* --- enums and scalar types of the remoted queries ------------------------ */

typedef enum nvmlEnableState_enum : int {
  NVML_FEATURE_DISABLED = 0,
  NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef enum nvmlTemperatureSensors_enum : int {
  NVML_TEMPERATURE_GPU = 0
} nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum : int {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlComputeMode_enum : int {
  NVML_COMPUTEMODE_DEFAULT = 0,
  NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
  NVML_COMPUTEMODE_PROHIBITED = 2,
  NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3
} nvmlComputeMode_t;

typedef enum nvmlPstates_enum : int {
  NVML_PSTATE_0 = 0,
  NVML_PSTATE_15 = 15,
  NVML_PSTATE_UNKNOWN = 32
} nvmlPstates_t;

typedef enum nvmlBrandType_enum : int {
  NVML_BRAND_UNKNOWN = 0,
  NVML_BRAND_TESLA = 2,
  NVML_BRAND_NVIDIA = 14
} nvmlBrandType_t;

typedef unsigned int nvmlDeviceArchitecture_t;
typedef unsigned int nvmlBusType_t;
typedef unsigned int nvmlPowerSource_t;
typedef unsigned int nvmlAffinityScope_t;
typedef unsigned int nvmlFanControlPolicy_t;
typedef unsigned int nvmlVgpuInstance_t;
typedef unsigned int nvmlVgpuTypeId_t;

/* Enums whose values Gleam passes through without reading them. */
typedef enum nvmlClockId_enum : int {} nvmlClockId_t;
typedef enum nvmlDetachGpuState_enum : int {} nvmlDetachGpuState_t;
typedef enum nvmlDeviceVgpuCapability_enum : int {} nvmlDeviceVgpuCapability_t;
typedef enum nvmlDriverModel_enum : int {} nvmlDriverModel_t;
typedef enum nvmlEccCounterType_enum : int {} nvmlEccCounterType_t;
typedef enum nvmlEncoderType_enum : int {} nvmlEncoderType_t;
typedef enum nvmlGpuOperationMode_enum : int {} nvmlGpuOperationMode_t;
typedef enum nvmlGpuP2PCapsIndex_enum : int {} nvmlGpuP2PCapsIndex_t;
typedef enum nvmlGpuTopologyLevel_enum : int {} nvmlGpuTopologyLevel_t;
typedef enum nvmlGpuVirtualizationMode_enum : int {} nvmlGpuVirtualizationMode_t;
typedef enum nvmlInforomObject_enum : int {} nvmlInforomObject_t;
typedef enum nvmlLedColor_enum : int {} nvmlLedColor_t;
typedef enum nvmlMemoryErrorType_enum : int {} nvmlMemoryErrorType_t;
typedef enum nvmlMemoryLocation_enum : int {} nvmlMemoryLocation_t;
typedef enum nvmlNvLinkCapability_enum : int {} nvmlNvLinkCapability_t;
typedef enum nvmlNvLinkErrorCounter_enum : int {} nvmlNvLinkErrorCounter_t;
typedef enum nvmlPageRetirementCause_enum : int {} nvmlPageRetirementCause_t;
typedef enum nvmlPcieLinkState_enum : int {} nvmlPcieLinkState_t;
typedef enum nvmlPcieUtilCounter_enum : int {} nvmlPcieUtilCounter_t;
typedef enum nvmlPerfPolicyType_enum : int {} nvmlPerfPolicyType_t;
typedef enum nvmlRestrictedAPI_enum : int {} nvmlRestrictedAPI_t;
typedef enum nvmlSamplingType_enum : int {} nvmlSamplingType_t;
typedef enum nvmlTemperatureThresholds_enum : int {} nvmlTemperatureThresholds_t;
typedef enum nvmlVgpuCapability_enum : int {} nvmlVgpuCapability_t;
typedef enum nvmlVgpuDriverCapability_enum : int {} nvmlVgpuDriverCapability_t;

/* --- structs of the remoted queries --------------------------------------- */

typedef struct nvmlMemory_st {
  unsigned long long total; /* bytes */
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
  unsigned int version; /* nvmlMemory_v2, set by the caller */
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlPciInfoExt_v1_st {
  unsigned int version;
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  unsigned int baseClass;
  unsigned int subClass;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfoExt_v1_t;
typedef nvmlPciInfoExt_v1_t nvmlPciInfoExt_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;    /* percent of the sample period */
  unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlBAR1Memory_st {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

typedef struct nvmlProcessInfo_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory; /* bytes */
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory; /* bytes */
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t, nvmlProcessInfo_t;

typedef struct nvmlViolationTime_st {
  unsigned long long referenceTime;
  unsigned long long violationTime;
} nvmlViolationTime_t;

typedef struct nvmlEccErrorCounts_st {
  unsigned long long l1Cache;
  unsigned long long l2Cache;
  unsigned long long deviceMemory;
  unsigned long long registerFile;
} nvmlEccErrorCounts_t;

typedef struct nvmlTemperature_v1_st {
  unsigned int version;
  nvmlTemperatureSensors_t sensorType;
  int temperature;
} nvmlTemperature_v1_t;
typedef nvmlTemperature_v1_t nvmlTemperature_t;

typedef struct nvmlFanSpeedInfo_v1_st {
  unsigned int version;
  unsigned int fan;
  unsigned int speed;
} nvmlFanSpeedInfo_v1_t;
typedef nvmlFanSpeedInfo_v1_t nvmlFanSpeedInfo_t;

typedef struct nvmlMarginTemperature_v1_st {
  unsigned int version;
  int marginTemperature;
} nvmlMarginTemperature_v1_t;
typedef nvmlMarginTemperature_v1_t nvmlMarginTemperature_t;

typedef struct nvmlDeviceAttributes_st {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

/* --- types of unsupported functions only (never dereferenced) ------------- */

typedef struct nvmlAccountingStats_gleam_st nvmlAccountingStats_t;
typedef struct nvmlAccountingStats_v2_gleam_st nvmlAccountingStats_v2_t;
typedef struct nvmlActiveVgpuInstanceInfo_gleam_st nvmlActiveVgpuInstanceInfo_t;
typedef struct nvmlBBXTimeData_v1_gleam_st nvmlBBXTimeData_v1_t;
typedef struct nvmlBridgeChipHierarchy_gleam_st nvmlBridgeChipHierarchy_t;
typedef struct nvmlC2cModeInfo_v1_gleam_st nvmlC2cModeInfo_v1_t;
typedef struct nvmlClkMonStatus_gleam_st nvmlClkMonStatus_t;
typedef struct nvmlClockOffset_gleam_st nvmlClockOffset_t;
typedef struct nvmlComputeInstanceInfo_gleam_st nvmlComputeInstanceInfo_t;
typedef struct nvmlComputeInstancePlacement_gleam_st nvmlComputeInstancePlacement_t;
typedef struct nvmlComputeInstanceProfileInfo_gleam_st nvmlComputeInstanceProfileInfo_t;
typedef struct nvmlComputeInstanceProfileInfo_v2_gleam_st nvmlComputeInstanceProfileInfo_v2_t;
typedef struct nvmlConfComputeGetKeyRotationThresholdInfo_gleam_st nvmlConfComputeGetKeyRotationThresholdInfo_t;
typedef struct nvmlConfComputeGpuAttestationReport_gleam_st nvmlConfComputeGpuAttestationReport_t;
typedef struct nvmlConfComputeGpuCertificate_gleam_st nvmlConfComputeGpuCertificate_t;
typedef struct nvmlConfComputeMemSizeInfo_gleam_st nvmlConfComputeMemSizeInfo_t;
typedef struct nvmlConfComputeSetKeyRotationThresholdInfo_gleam_st nvmlConfComputeSetKeyRotationThresholdInfo_t;
typedef struct nvmlConfComputeSystemCaps_gleam_st nvmlConfComputeSystemCaps_t;
typedef struct nvmlConfComputeSystemState_gleam_st nvmlConfComputeSystemState_t;
typedef struct nvmlCoolerInfo_gleam_st nvmlCoolerInfo_t;
typedef struct nvmlDeviceAddressingMode_gleam_st nvmlDeviceAddressingMode_t;
typedef struct nvmlDeviceCapabilities_gleam_st nvmlDeviceCapabilities_t;
typedef struct nvmlDeviceCurrentClockFreqs_gleam_st nvmlDeviceCurrentClockFreqs_t;
typedef struct nvmlDevicePerfModes_gleam_st nvmlDevicePerfModes_t;
typedef struct nvmlDevicePowerMizerModes_v1_gleam_st nvmlDevicePowerMizerModes_v1_t;
typedef struct nvmlDramEncryptionInfo_gleam_st nvmlDramEncryptionInfo_t;
typedef struct nvmlEccSramErrorStatus_gleam_st nvmlEccSramErrorStatus_t;
typedef struct nvmlEccSramUniqueUncorrectedErrorCounts_gleam_st nvmlEccSramUniqueUncorrectedErrorCounts_t;
typedef struct nvmlEncoderSessionInfo_gleam_st nvmlEncoderSessionInfo_t;
typedef struct nvmlEventData_gleam_st nvmlEventData_t;
typedef struct nvmlExcludedDeviceInfo_gleam_st nvmlExcludedDeviceInfo_t;
typedef struct nvmlFBCSessionInfo_gleam_st nvmlFBCSessionInfo_t;
typedef struct nvmlFBCStats_gleam_st nvmlFBCStats_t;
typedef struct nvmlFieldValue_gleam_st nvmlFieldValue_t;
typedef struct nvmlGetCPER_v1_gleam_st nvmlGetCPER_v1_t;
typedef struct nvmlGpmMetricsGet_gleam_st nvmlGpmMetricsGet_t;
typedef struct nvmlGpmSupport_gleam_st nvmlGpmSupport_t;
typedef struct nvmlGpuDynamicPstatesInfo_gleam_st nvmlGpuDynamicPstatesInfo_t;
typedef struct nvmlGpuFabricInfoV_gleam_st nvmlGpuFabricInfoV_t;
typedef struct nvmlGpuFabricInfo_gleam_st nvmlGpuFabricInfo_t;
typedef struct nvmlGpuInstanceInfo_gleam_st nvmlGpuInstanceInfo_t;
typedef struct nvmlGpuInstancePlacement_gleam_st nvmlGpuInstancePlacement_t;
typedef struct nvmlGpuInstanceProfileInfo_gleam_st nvmlGpuInstanceProfileInfo_t;
typedef struct nvmlGpuInstanceProfileInfo_v2_gleam_st nvmlGpuInstanceProfileInfo_v2_t;
typedef struct nvmlGpuP2PStatus_gleam_st nvmlGpuP2PStatus_t;
typedef struct nvmlGpuThermalSettings_gleam_st nvmlGpuThermalSettings_t;
typedef struct nvmlGridLicensableFeatures_gleam_st nvmlGridLicensableFeatures_t;
typedef struct nvmlHostVgpuMode_gleam_st nvmlHostVgpuMode_t;
typedef struct nvmlHostname_v1_gleam_st nvmlHostname_v1_t;
typedef struct nvmlHwbcEntry_gleam_st nvmlHwbcEntry_t;
typedef struct nvmlIntNvLinkDeviceType_gleam_st nvmlIntNvLinkDeviceType_t;
typedef struct nvmlLedState_gleam_st nvmlLedState_t;
typedef struct nvmlNvLinkInfo_gleam_st nvmlNvLinkInfo_t;
typedef struct nvmlNvLinkPowerThres_gleam_st nvmlNvLinkPowerThres_t;
typedef struct nvmlNvLinkUtilizationControl_gleam_st nvmlNvLinkUtilizationControl_t;
typedef struct nvmlNvlinkGetBwMode_gleam_st nvmlNvlinkGetBwMode_t;
typedef struct nvmlNvlinkSetBwMode_gleam_st nvmlNvlinkSetBwMode_t;
typedef struct nvmlNvlinkSupportedBwModes_gleam_st nvmlNvlinkSupportedBwModes_t;
typedef struct nvmlPRMCounterList_v1_gleam_st nvmlPRMCounterList_v1_t;
typedef struct nvmlPRMTLV_v1_gleam_st nvmlPRMTLV_v1_t;
typedef struct nvmlPSUInfo_gleam_st nvmlPSUInfo_t;
typedef struct nvmlPdi_gleam_st nvmlPdi_t;
typedef struct nvmlPlatformInfo_gleam_st nvmlPlatformInfo_t;
typedef struct nvmlPowerSmoothingProfile_gleam_st nvmlPowerSmoothingProfile_t;
typedef struct nvmlPowerSmoothingState_gleam_st nvmlPowerSmoothingState_t;
typedef struct nvmlPowerValue_v2_gleam_st nvmlPowerValue_v2_t;
typedef struct nvmlProcessDetailList_gleam_st nvmlProcessDetailList_t;
typedef struct nvmlProcessUtilizationSample_gleam_st nvmlProcessUtilizationSample_t;
typedef struct nvmlProcessesUtilizationInfo_gleam_st nvmlProcessesUtilizationInfo_t;
typedef struct nvmlRemappedRowsInfo_v2_gleam_st nvmlRemappedRowsInfo_v2_t;
typedef struct nvmlRepairStatus_gleam_st nvmlRepairStatus_t;
typedef struct nvmlRowRemapperHistogramValues_gleam_st nvmlRowRemapperHistogramValues_t;
typedef struct nvmlRusdSettings_v1_gleam_st nvmlRusdSettings_v1_t;
typedef struct nvmlSample_gleam_st nvmlSample_t;
typedef struct nvmlSystemConfComputeSettings_gleam_st nvmlSystemConfComputeSettings_t;
typedef struct nvmlSystemDriverBranchInfo_gleam_st nvmlSystemDriverBranchInfo_t;
typedef struct nvmlSystemEventSetCreateRequest_gleam_st nvmlSystemEventSetCreateRequest_t;
typedef struct nvmlSystemEventSetFreeRequest_gleam_st nvmlSystemEventSetFreeRequest_t;
typedef struct nvmlSystemEventSetWaitRequest_gleam_st nvmlSystemEventSetWaitRequest_t;
typedef struct nvmlSystemRegisterEventRequest_gleam_st nvmlSystemRegisterEventRequest_t;
typedef struct nvmlUUID_gleam_st nvmlUUID_t;
typedef struct nvmlUnitFanSpeeds_gleam_st nvmlUnitFanSpeeds_t;
typedef struct nvmlUnitInfo_gleam_st nvmlUnitInfo_t;
typedef struct nvmlUnrepairableMemoryStatus_v1_gleam_st nvmlUnrepairableMemoryStatus_v1_t;
typedef struct nvmlValueType_gleam_st nvmlValueType_t;
typedef struct nvmlVgpuCreatablePlacementInfo_gleam_st nvmlVgpuCreatablePlacementInfo_t;
typedef struct nvmlVgpuHeterogeneousMode_gleam_st nvmlVgpuHeterogeneousMode_t;
typedef struct nvmlVgpuInstanceUtilizationSample_gleam_st nvmlVgpuInstanceUtilizationSample_t;
typedef struct nvmlVgpuInstancesUtilizationInfo_gleam_st nvmlVgpuInstancesUtilizationInfo_t;
typedef struct nvmlVgpuLicenseInfo_gleam_st nvmlVgpuLicenseInfo_t;
typedef struct nvmlVgpuMetadata_gleam_st nvmlVgpuMetadata_t;
typedef struct nvmlVgpuPgpuCompatibility_gleam_st nvmlVgpuPgpuCompatibility_t;
typedef struct nvmlVgpuPgpuMetadata_gleam_st nvmlVgpuPgpuMetadata_t;
typedef struct nvmlVgpuPlacementId_gleam_st nvmlVgpuPlacementId_t;
typedef struct nvmlVgpuPlacementList_gleam_st nvmlVgpuPlacementList_t;
typedef struct nvmlVgpuProcessUtilizationSample_gleam_st nvmlVgpuProcessUtilizationSample_t;
typedef struct nvmlVgpuProcessesUtilizationInfo_gleam_st nvmlVgpuProcessesUtilizationInfo_t;
typedef struct nvmlVgpuRuntimeState_gleam_st nvmlVgpuRuntimeState_t;
typedef struct nvmlVgpuSchedulerCapabilities_gleam_st nvmlVgpuSchedulerCapabilities_t;
typedef struct nvmlVgpuSchedulerGetState_gleam_st nvmlVgpuSchedulerGetState_t;
typedef struct nvmlVgpuSchedulerLogInfo_gleam_st nvmlVgpuSchedulerLogInfo_t;
typedef struct nvmlVgpuSchedulerLogInfo_v2_gleam_st nvmlVgpuSchedulerLogInfo_v2_t;
typedef struct nvmlVgpuSchedulerLog_gleam_st nvmlVgpuSchedulerLog_t;
typedef struct nvmlVgpuSchedulerSetState_gleam_st nvmlVgpuSchedulerSetState_t;
typedef struct nvmlVgpuSchedulerStateInfo_gleam_st nvmlVgpuSchedulerStateInfo_t;
typedef struct nvmlVgpuSchedulerStateInfo_v2_gleam_st nvmlVgpuSchedulerStateInfo_v2_t;
typedef struct nvmlVgpuSchedulerState_gleam_st nvmlVgpuSchedulerState_t;
typedef struct nvmlVgpuSchedulerState_v2_gleam_st nvmlVgpuSchedulerState_v2_t;
typedef struct nvmlVgpuTypeBar1Info_gleam_st nvmlVgpuTypeBar1Info_t;
typedef struct nvmlVgpuTypeIdInfo_gleam_st nvmlVgpuTypeIdInfo_t;
typedef struct nvmlVgpuTypeMaxInstance_gleam_st nvmlVgpuTypeMaxInstance_t;
typedef struct nvmlVgpuVersion_gleam_st nvmlVgpuVersion_t;
typedef struct nvmlVgpuVmIdType_gleam_st nvmlVgpuVmIdType_t;
typedef struct nvmlWorkloadPowerProfileCurrentProfiles_gleam_st nvmlWorkloadPowerProfileCurrentProfiles_t;
typedef struct nvmlWorkloadPowerProfileProfilesInfo_gleam_st nvmlWorkloadPowerProfileProfilesInfo_t;
typedef struct nvmlWorkloadPowerProfileRequestedProfiles_gleam_st nvmlWorkloadPowerProfileRequestedProfiles_t;
typedef struct nvmlWorkloadPowerProfileUpdateProfiles_v1_gleam_st nvmlWorkloadPowerProfileUpdateProfiles_v1_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GLEAM_WIRE_NVML_H */
