/* device_name.h: how the emulated device names itself, so host code can tell it from a GPU. */
#ifndef EMU_DEVICE_NAME_H
#define EMU_DEVICE_NAME_H

#define EMU_DEVICE_NAME "PTX emulator (H100-like, no timing)"
#define EMU_DEVICE_NAME_PREFIX "PTX emulator"

#endif
