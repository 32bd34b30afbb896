#!/usr/bin/env python3
"""Generate the bundled smart-home evaluation dataset (tracerag/datasets/data/smarthome/).

Why a generator instead of hand-edited JSON: every gold label is *derived* from the home inventory and
the ideal parse (category, name words, rooms in/out, intent) by one rule, so a label can never forget
a device that matches, and never include a device of another category or one that lacks the command.
The script validates everything before writing and fails loudly; it is stdlib-only and seeded, so two
runs give byte-identical files.

    python scripts/generate_smarthome.py                 # (re)write the four homes + README.md
    python scripts/generate_smarthome.py --check         # exit 1 if the files on disk are stale
    python scripts/generate_smarthome.py --capabilities ../shared/data/smartthings/capabilities.json
                                                         # also re-verify ids against the real definitions
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

SEED = "tracerag-smarthome-v1"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tracerag" / "datasets" / "data" / "smarthome"

STANDARD_CATEGORIES = frozenset({
    "Light", "Switch", "SmartPlug", "Blind", "AirConditioner", "Fan", "Television", "NetworkAudio",
    "Washer", "Dryer", "Charger", "Hub", "Thermostat", "RobotCleaner", "Lock", "GarageDoor",
    "AirPurifier", "Humidifier", "Refrigerator", "MotionSensor", "ContactSensor", "TempHumiditySensor",
})
QUANTIFIERS = ("one", "any", "all", "except")

# ---------------------------------------------------------------------------------------------------
# Real SmartThings capability definitions (subset used here), copied from the public capabilities API
# (GET /capabilities/{id}/1): command -> None (no argument) or (type, minimum, maximum, enum) of the
# first argument. thermostatMode's enum is cut to the values used. `healthCheck` is a real capability
# every device in GET /v1/devices carries; it has no commands.
# ---------------------------------------------------------------------------------------------------
REAL_CAPABILITIES: dict[str, dict[str, tuple | None]] = {
    'switch': {'off': None, 'on': None},
    'switchLevel': {'setLevel': ('integer', 0, 100, None)},
    'colorControl': {'setColor': ('object', None, None, None), 'setHue': ('number', 0, None, None),
                     'setSaturation': ('number', 0, None, None)},
    'colorTemperature': {'setColorTemperature': ('integer', 1, 30000, None)},
    'statelessSwitchLevelStep': {'stepLevel': ('integer', -100, 100, None)},
    'statelessColorTemperatureStep': {'stepColorTemperatureByPercent': ('integer', -100, 100, None)},
    'outlet': {'off': None, 'on': None},
    'windowShade': {'close': None, 'open': None, 'pause': None},
    'windowShadeLevel': {'setShadeLevel': ('integer', 0, 100, None)},
    'windowShadePreset': {'setPresetPosition': ('integer', 0, 100, None), 'presetPosition': None},
    'windowShadeTiltLevel': {'setShadeTiltLevel': ('integer', 0, 100, None)},
    'garageDoorControl': {'close': None, 'open': None},
    'airConditionerMode': {'setAirConditionerMode': ('string', None, None, None)},
    'airConditionerFanMode': {'setFanMode': ('string', None, None, None)},
    'fanOscillationMode': {'setFanOscillationMode': ('string', None, None, (
        'off', 'individual', 'fixed', 'vertical', 'horizontal', 'all', 'indirect', 'direct', 'fixedCenter',
        'fixedLeft', 'fixedRight', 'far', 'wide', 'mid', 'spot', 'swing', 'leftZone', 'rightZone'))},
    'thermostatCoolingSetpoint': {'setCoolingSetpoint': ('number', -460, 10000, None)},
    'thermostatHeatingSetpoint': {'setHeatingSetpoint': ('number', -460, 10000, None)},
    'thermostatMode': {'heat': None, 'auto': None, 'cool': None, 'emergencyHeat': None, 'off': None,
                       'setThermostatMode': ('string', None, None, ('auto', 'away', 'cool', 'eco', 'heat', 'off'))},
    'thermostatFanMode': {'fanOn': None, 'fanAuto': None, 'fanCirculate': None,
                          'setThermostatFanMode': ('string', None, None,
                                                   ('auto', 'circulate', 'followschedule', 'on'))},
    'fanSpeed': {'setFanSpeed': ('integer', 0, None, None)},
    'fanMode': {'setFanMode': ('string', None, None, ('auto', 'low', 'medium', 'high', 'off', 'turbo'))},
    'airPurifierFanMode': {'setAirPurifierFanMode': ('string', None, None, (
        'auto', 'sleep', 'low', 'medium', 'high', 'quiet', 'windFree', 'off'))},
    'humidifierMode': {'setHumidifierMode': ('string', None, None, ('auto', 'low', 'medium', 'high'))},
    'audioVolume': {'volumeDown': None, 'volumeUp': None, 'setVolume': ('integer', 0, 100, None)},
    'audioMute': {'setMute': ('string', None, None, ('muted', 'unmuted')), 'mute': None, 'unmute': None},
    'mediaPlayback': {'play': None, 'stop': None, 'rewind': None, 'fastForward': None, 'pause': None,
                      'setPlaybackStatus': ('string', None, None, (
                          'paused', 'playing', 'stopped', 'fast forwarding', 'rewinding'))},
    'mediaTrackControl': {'previousTrack': None, 'nextTrack': None},
    'mediaInputSource': {'setInputSource': ('string', None, None, (
        'AM', 'CD', 'FM', 'HDMI', 'HDMI1', 'HDMI2', 'HDMI3', 'HDMI4', 'HDMI5', 'HDMI6', 'digitalTv', 'USB',
        'YouTube', 'aux', 'bluetooth', 'digital', 'melon', 'wifi', 'network', 'optical', 'coaxial',
        'analog1', 'analog2', 'analog3', 'phono'))},
    'tvChannel': {'channelDown': None, 'setTvChannel': ('string', None, None, None), 'channelUp': None,
                  'setTvChannelName': ('string', None, None, None)},
    'mediaPlaybackRepeat': {'setPlaybackRepeatMode': ('string', None, None, ('all', 'off', 'one'))},
    'mediaPlaybackShuffle': {'setPlaybackShuffle': ('string', None, None, ('disabled', 'enabled'))},
    'mediaPresets': {'playPreset': ('string', None, None, None)},
    'lock': {'unlock': None, 'unlatch': None, 'lock': None},
    'washerMode': {'setWasherMode': ('string', None, None, ('regular', 'heavy', 'rinse', 'spinDry'))},
    'washerOperatingState': {'setMachineState': ('string', None, None, ('pause', 'run', 'stop'))},
    'dryerMode': {'setDryerMode': ('string', None, None, ('regular', 'lowHeat', 'highHeat'))},
    'dryerOperatingState': {'setMachineState': ('string', None, None, ('pause', 'run', 'stop'))},
    'robotCleanerMovement': {'setRobotCleanerMovement': ('string', None, None, (
        'homing', 'idle', 'charging', 'alarm', 'powerOff', 'reserve', 'point', 'after', 'cleaning', 'pause',
        'washingMop'))},
    'robotCleanerCleaningMode': {'setRobotCleanerCleaningMode': ('string', None, None, (
        'auto', 'part', 'repeat', 'manual', 'stop', 'map'))},
    'robotCleanerTurboMode': {'setRobotCleanerTurboMode': ('string', None, None, (
        'on', 'off', 'silence', 'extraSilence'))},
    'evseChargingSession': {'setMinCurrent': ('integer', 0, None, None),
                            'setTargetEndTime': ('string', None, None, None),
                            'enableCharging': ('string', None, None, None), 'disableCharging': None,
                            'setMaxCurrent': ('integer', 0, None, None)},
    'energyMeter': {'resetEnergyMeter': None},
    'custom.airConditionerOptionalMode': {'setAcOptionalMode': ('string', None, None, (
        'off', 'energySaving', 'windFree', 'sleep', 'windFreeSleep', 'speed', 'smart', 'quiet', 'twoStep',
        'comfort', 'dlightCool', 'dryComfort', 'cubePurify', 'longWind', 'motionIndirect', 'motionDirect'))},
    'evseState': {}, 'chargingState': {}, 'temperatureMeasurement': {}, 'relativeHumidityMeasurement': {},
    'contactSensor': {}, 'motionSensor': {}, 'powerMeter': {}, 'battery': {}, 'illuminanceMeasurement': {},
    'refresh': {'refresh': None},
}
EXTRA_REAL_CAPABILITIES = {"healthCheck"}

# ---------------------------------------------------------------------------------------------------
# Enumerated argument values: (value, Chinese description, English description)
# ---------------------------------------------------------------------------------------------------
AC_MODES_STD = [("cool", "制冷", "cool"), ("heat", "制热", "heat"), ("dry", "除湿", "dry"),
                ("fanOnly", "送风", "fan only"), ("auto", "自动", "auto")]
AC_MODES_SAMSUNG = [("cool", "制冷", "cool"), ("dry", "除湿", "dry"), ("wind", "送风", "fan only"),
                    ("auto", "自动", "auto"), ("heat", "制热", "heat")]
AC_FAN = [("auto", "自动风", "auto"), ("low", "低风", "low"), ("medium", "中风", "medium"),
          ("high", "高风", "high"), ("turbo", "强劲风", "turbo")]
AC_SWING = [("fixed", "固定风向", "fixed"), ("vertical", "上下扫风", "vertical swing"),
            ("horizontal", "左右扫风", "horizontal swing"), ("all", "全方位扫风", "swing all directions")]
FAN_SWING = [("swing", "摇头", "oscillate"), ("off", "停止摇头", "oscillation off")]
FAN_MODES = [("low", "低速", "low"), ("medium", "中速", "medium"), ("high", "高速", "high"),
             ("auto", "自动", "auto"), ("turbo", "强劲", "turbo")]
AC_OPT = [("off", "关闭附加模式", "off"), ("sleep", "睡眠", "sleep"), ("windFree", "无风感", "WindFree"),
          ("speed", "速冷", "fast cool"), ("quiet", "静音", "quiet"),
          ("energySaving", "节能", "energy saving")]
PURIFIER_MODES = [("auto", "自动", "auto"), ("sleep", "睡眠", "sleep"), ("low", "低速", "low"),
                  ("medium", "中速", "medium"), ("high", "高速", "high")]
HUMIDIFIER_MODES = [("auto", "自动", "auto"), ("low", "低档", "low"), ("medium", "中档", "medium"),
                    ("high", "高档", "high")]
MUTE = [("muted", "静音", "muted"), ("unmuted", "取消静音", "unmuted")]
INPUTS = [("HDMI1", "HDMI1", "HDMI 1"), ("HDMI2", "HDMI2", "HDMI 2"), ("digitalTv", "电视直播", "live TV"),
          ("USB", "U盘", "USB")]
REPEAT = [("all", "列表循环", "repeat all"), ("one", "单曲循环", "repeat one"), ("off", "关闭循环", "repeat off")]
SHUFFLE = [("enabled", "随机播放", "shuffle on"), ("disabled", "顺序播放", "shuffle off")]
MACHINE = [("run", "启动", "run"), ("pause", "暂停", "pause"), ("stop", "停止", "stop")]
WASHER_MODES = [("regular", "标准洗", "regular"), ("heavy", "强力洗", "heavy duty"), ("rinse", "漂洗", "rinse"),
                ("spinDry", "脱水", "spin dry")]
DRYER_MODES = [("regular", "标准烘干", "regular"), ("lowHeat", "低温烘干", "low heat"),
               ("highHeat", "高温烘干", "high heat")]
ROBOT_MOVE = [("cleaning", "开始清扫", "start cleaning"), ("pause", "暂停清扫", "pause"),
              ("homing", "回充电座", "return to dock"), ("idle", "待机", "idle")]
ROBOT_MODE = [("auto", "自动清扫", "auto"), ("part", "局部清扫", "spot clean"), ("repeat", "重复清扫", "repeat"),
              ("manual", "手动清扫", "manual"), ("map", "按地图清扫", "map"), ("stop", "停止清扫", "stop")]
ROBOT_TURBO = [("on", "强力吸尘", "turbo on"), ("off", "标准吸力", "turbo off"), ("silence", "静音", "silent")]
THERMO_CN = [("heat", "制热", "heat"), ("eco", "节能", "eco"), ("auto", "自动", "auto"), ("off", "关闭", "off")]
THERMO_EN = [("heat", "制热", "heat"), ("cool", "制冷", "cool"), ("auto", "自动", "auto"), ("eco", "节能", "eco"),
             ("off", "关闭", "off")]
THERMO_FAN = [("auto", "自动", "auto"), ("on", "常开", "on"), ("circulate", "循环", "circulate")]


def C(zh, en, typ=None, rng=None, vals=None):
    return {"zh": zh, "en": en, "type": typ, "range": rng, "vals": vals}


SETPOINT_RANGE = {"C": (16, 30, "C"), "F": (60, 86, "F")}

# Command catalogue: "capability.command" -> description pools, argument type, default range/values.
CMD = {
    "switch.on": C(["打开电源", "开启电源", "电源开", "打开"], ["turn on", "power on", "switch on"]),
    "switch.off": C(["关闭电源", "关掉电源", "电源关", "关闭"], ["turn off", "power off", "switch off"]),
    "outlet.on": C(["插座通电", "打开插座"], ["outlet on", "turn outlet on"]),
    "outlet.off": C(["插座断电", "关闭插座"], ["outlet off", "turn outlet off"]),
    "switchLevel.setLevel": C(["设置亮度", "调节亮度", "亮度调节"], ["set brightness", "set level", "set dimmer level"],
                              "integer", (0, 100, "%")),
    "statelessSwitchLevelStep.stepLevel": C(["亮度增减", "逐级调节亮度"], ["step brightness up or down", "step level"],
                                            "integer", (-100, 100, "%")),
    "colorTemperature.setColorTemperature": C(["设置色温", "调节色温", "色温调节"], ["set color temperature"],
                                              "integer", (2700, 6500, "K")),
    "statelessColorTemperatureStep.stepColorTemperatureByPercent": C(
        ["色温增减", "逐级调节色温"], ["step color temperature"], "integer", (-100, 100, "%")),
    "colorControl.setColor": C(["设置颜色", "调节灯光颜色"], ["set color", "set light color"], "string"),
    "colorControl.setHue": C(["设置色调", "调节色相"], ["set hue"], "number", (0, 100, "%")),
    "colorControl.setSaturation": C(["设置饱和度"], ["set saturation"], "number", (0, 100, "%")),
    "windowShade.open": C(["打开窗帘", "拉开窗帘"], ["open shade", "open"]),
    "windowShade.close": C(["关闭窗帘", "合上窗帘"], ["close shade", "close"]),
    "windowShade.pause": C(["暂停窗帘", "窗帘停止"], ["pause shade", "stop shade"]),
    "windowShadeLevel.setShadeLevel": C(["设置窗帘开合度", "设置窗帘位置"], ["set shade level", "set shade position"],
                                        "integer", (0, 100, "%")),
    "windowShadePreset.presetPosition": C(["移动到预设位置", "窗帘到预设位置"], ["go to preset position"]),
    "windowShadeTiltLevel.setShadeTiltLevel": C(["设置百叶角度", "调节叶片角度"], ["set slat tilt", "set tilt level"],
                                                "integer", (0, 100, "%")),
    "garageDoorControl.open": C(["打开车库门", "开启车库门"], ["open garage door"]),
    "garageDoorControl.close": C(["关闭车库门", "关上车库门"], ["close garage door"]),
    "airConditionerMode.setAirConditionerMode": C(["设置空调模式", "切换空调模式"],
                                                  ["set air conditioner mode", "set AC mode"], "string",
                                                  vals=AC_MODES_STD),
    "airConditionerFanMode.setFanMode": C(["设置空调风速", "调节空调风量"],
                                          ["set air conditioner fan mode", "set AC fan speed"], "string", vals=AC_FAN),
    "fanOscillationMode.setFanOscillationMode": C(["设置摆风模式", "设置扫风"], ["set fan oscillation mode",
                                                                           "set swing mode"], "string", vals=AC_SWING),
    "thermostatCoolingSetpoint.setCoolingSetpoint": C(["设置制冷温度", "设定制冷目标温度"],
                                                      ["set cooling setpoint", "set cooling temperature"], "number",
                                                      SETPOINT_RANGE),
    "thermostatHeatingSetpoint.setHeatingSetpoint": C(["设置制热温度", "设定制热目标温度"],
                                                      ["set heating setpoint", "set heating temperature"], "number",
                                                      SETPOINT_RANGE),
    "thermostatMode.setThermostatMode": C(["设置温控模式", "切换温控器模式"], ["set thermostat mode"], "string",
                                          vals=THERMO_CN),
    "thermostatMode.heat": C(["切换到制热", "开启制热"], ["heat mode", "switch to heat"]),
    "thermostatMode.cool": C(["切换到制冷", "开启制冷"], ["cool mode", "switch to cool"]),
    "thermostatMode.auto": C(["切换到自动模式"], ["auto mode"]),
    "thermostatMode.off": C(["关闭温控", "温控关闭"], ["turn thermostat off", "off mode"]),
    "thermostatFanMode.setThermostatFanMode": C(["设置循环风模式"], ["set thermostat fan mode"], "string",
                                                vals=THERMO_FAN),
    "fanSpeed.setFanSpeed": C(["设置风速", "调节风扇档位"], ["set fan speed"], "integer", (0, 3, None)),
    "fanMode.setFanMode": C(["设置风扇模式", "设置风扇档位"], ["set fan mode"], "string", vals=FAN_MODES),
    "airPurifierFanMode.setAirPurifierFanMode": C(["设置净化器模式", "设置净化风速"],
                                                  ["set air purifier fan mode", "set purifier mode"], "string",
                                                  vals=PURIFIER_MODES),
    "humidifierMode.setHumidifierMode": C(["设置加湿模式", "设置加湿档位"], ["set humidifier mode"], "string",
                                          vals=HUMIDIFIER_MODES),
    "audioVolume.setVolume": C(["设置音量", "调节音量"], ["set volume"], "integer", (0, 100, "%")),
    "audioVolume.volumeUp": C(["调高音量", "音量加"], ["volume up", "turn volume up"]),
    "audioVolume.volumeDown": C(["调低音量", "音量减"], ["volume down", "turn volume down"]),
    "audioMute.mute": C(["静音"], ["mute"]),
    "audioMute.unmute": C(["取消静音"], ["unmute"]),
    "audioMute.setMute": C(["设置静音状态"], ["set mute state"], "string", vals=MUTE),
    "tvChannel.setTvChannel": C(["切换频道", "设置频道"], ["set TV channel", "change channel"], "string"),
    "tvChannel.channelUp": C(["下一个频道", "频道加"], ["channel up"]),
    "tvChannel.channelDown": C(["上一个频道", "频道减"], ["channel down"]),
    "mediaInputSource.setInputSource": C(["切换信号源", "切换输入源"], ["set input source"], "string", vals=INPUTS),
    "mediaPlayback.play": C(["播放", "开始播放"], ["play", "start playback"]),
    "mediaPlayback.pause": C(["暂停", "暂停播放"], ["pause"]),
    "mediaPlayback.stop": C(["停止播放"], ["stop", "stop playback"]),
    "mediaTrackControl.nextTrack": C(["下一首", "切换下一曲"], ["next track"]),
    "mediaTrackControl.previousTrack": C(["上一首", "切换上一曲"], ["previous track"]),
    "mediaPlaybackRepeat.setPlaybackRepeatMode": C(["设置循环模式"], ["set repeat mode"], "string", vals=REPEAT),
    "mediaPlaybackShuffle.setPlaybackShuffle": C(["设置随机播放"], ["set shuffle"], "string", vals=SHUFFLE),
    "mediaPresets.playPreset": C(["播放收藏", "播放预设歌单"], ["play preset", "play favorite"], "string"),
    "lock.lock": C(["上锁", "锁门"], ["lock"]),
    "lock.unlock": C(["解锁", "开锁"], ["unlock"]),
    "washerOperatingState.setMachineState": C(["设置洗衣机运行状态", "控制洗衣程序"], ["set washer state"], "string",
                                              vals=MACHINE),
    "washerMode.setWasherMode": C(["设置洗涤模式"], ["set washer mode"], "string", vals=WASHER_MODES),
    "dryerOperatingState.setMachineState": C(["设置烘干机运行状态", "控制烘干程序"], ["set dryer state"], "string",
                                             vals=MACHINE),
    "dryerMode.setDryerMode": C(["设置烘干模式"], ["set dryer mode"], "string", vals=DRYER_MODES),
    "robotCleanerMovement.setRobotCleanerMovement": C(["设置扫地机动作", "控制扫地机器人"],
                                                      ["set robot cleaner movement"], "string", vals=ROBOT_MOVE),
    "robotCleanerCleaningMode.setRobotCleanerCleaningMode": C(["设置清扫模式"], ["set cleaning mode"], "string",
                                                              vals=ROBOT_MODE),
    "robotCleanerTurboMode.setRobotCleanerTurboMode": C(["设置吸力模式"], ["set suction mode", "set turbo mode"],
                                                        "string", vals=ROBOT_TURBO),
    # enableCharging takes (time, minCurrent, maxCurrent); the spec format describes one argument: the time.
    "evseChargingSession.enableCharging": C(["开始充电", "启动充电"], ["start charging", "enable charging"], "string"),
    "evseChargingSession.disableCharging": C(["停止充电"], ["stop charging", "disable charging"]),
    "evseChargingSession.setMaxCurrent": C(["设置最大充电电流"], ["set max charging current"], "integer",
                                           (6000, 32000, "mA")),
    "energyMeter.resetEnergyMeter": C(["重置电量统计", "电量清零"], ["reset energy meter"]),
    "custom.airConditionerOptionalMode.setAcOptionalMode": C(["设置空调附加模式", "设置空调特殊模式"],
                                                             ["set AC optional mode"], "string", vals=AC_OPT),
}

# ---------------------------------------------------------------------------------------------------
# Device profiles (several devices share one, as in real homes)
# ---------------------------------------------------------------------------------------------------
ON_OFF = ["switch.on", "switch.off"]


def P(cat, name, mfr, conn, model, caps, cmds, ov=None, **extra):
    return {"cat": cat, "name": name, "mfr": mfr, "conn": conn, "model": model, "caps": caps, "cmds": cmds,
            "ov": ov or {}, **extra}


HC = ["healthCheck", "refresh"]
PT = {
    "light_ct": P("Light", "hue-color-temperature-bulb", "Signify Netherlands B.V.", "VIPER", "Hue ambiance bulb",
                  ["colorTemperature", "switch", "switchLevel", *HC],
                  [*ON_OFF, "switchLevel.setLevel", "colorTemperature.setColorTemperature"],
                  {"colorTemperature.setColorTemperature": {"rng": (2200, 6500, "K")}}, mnmn="0A2r", hw="LTA001"),
    "light_rgb": P("Light", "hue-rgbw-color-bulb", "Signify Netherlands B.V.", "VIPER", "Hue color lamp",
                   ["switch", "colorControl", "colorTemperature", "switchLevel", *HC],
                   [*ON_OFF, "switchLevel.setLevel", "colorTemperature.setColorTemperature", "colorControl.setColor",
                    "colorControl.setHue", "colorControl.setSaturation"],
                   {"colorTemperature.setColorTemperature": {"rng": (2000, 6500, "K")}}, mnmn="0A2r", hw="LCA001"),
    "light_dim": P("Light", "ikea-tradfri-dimmable-bulb", "IKEA of Sweden", "ZIGBEE", "TRADFRI bulb GU10 WW 400lm",
                   ["switch", "switchLevel", *HC], [*ON_OFF, "switchLevel.setLevel"]),
    "light_step": P("Light", "matter-color-temperature-light", "Aqara", "MATTER", "LED Bulb T1",
                    ["switch", "switchLevel", "colorTemperature", "statelessSwitchLevelStep",
                     "statelessColorTemperatureStep", *HC],
                    [*ON_OFF, "switchLevel.setLevel", "statelessSwitchLevelStep.stepLevel",
                     "colorTemperature.setColorTemperature",
                     "statelessColorTemperatureStep.stepColorTemperatureByPercent"], vendor=4447, product=8193),
    "light_onoff": P("Light", "aqara-light-relay", "Aqara", "ZIGBEE", "Single Switch Module T1",
                     ["switch", *HC], ON_OFF),
    "light_ceiling": P("Light", "yeelight-ceiling-light", "Yeelight", "LAN", "Ceiling Light C2001",
                       ["switch", "switchLevel", "colorTemperature", *HC],
                       [*ON_OFF, "switchLevel.setLevel", "colorTemperature.setColorTemperature"]),
    "shade_level": P("Blind", "zigbee-window-shade", "Aqara", "ZIGBEE", "Curtain Driver E1",
                     ["windowShade", "windowShadeLevel", "windowShadePreset", "battery", *HC],
                     ["windowShade.open", "windowShade.close", "windowShade.pause", "windowShadeLevel.setShadeLevel",
                      "windowShadePreset.presetPosition"]),
    "shade_tilt": P("Blind", "zigbee-window-shade-tilt", "Somfy", "ZIGBEE", "Sonesse 30 Venetian",
                    ["windowShade", "windowShadeLevel", "windowShadeTiltLevel", *HC],
                    ["windowShade.open", "windowShade.close", "windowShade.pause", "windowShadeLevel.setShadeLevel",
                     "windowShadeTiltLevel.setShadeTiltLevel"]),
    # like the real c2c-shade in devices-sample.json: the position is a switchLevel
    "shade_c2c": P("Blind", "c2c-shade", "WonderLabs Company", "VIPER", "WoCurtain3",
                   ["windowShade", "switchLevel", "refresh", "healthCheck"],
                   ["windowShade.open", "windowShade.close", "windowShade.pause", "switchLevel.setLevel"],
                   {"switchLevel.setLevel": {"zh": ["设置窗帘开合度", "设置开合百分比"],
                                             "en": ["set open level", "set curtain position"]}},
                   mnmn="SmartThings", pres="SmartThings-smartthings-c2c-shade"),
    "ac_samsung": P("AirConditioner", "samsung-ocf-room-ac", "Samsung Electronics", "OCF", "ARTIK051_PRAC_20K",
                    ["switch", "airConditionerMode", "airConditionerFanMode", "fanOscillationMode",
                     "thermostatCoolingSetpoint", "temperatureMeasurement", "relativeHumidityMeasurement",
                     "custom.airConditionerOptionalMode", *HC],
                    [*ON_OFF, "airConditionerMode.setAirConditionerMode",
                     "thermostatCoolingSetpoint.setCoolingSetpoint", "airConditionerFanMode.setFanMode",
                     "fanOscillationMode.setFanOscillationMode", "custom.airConditionerOptionalMode.setAcOptionalMode"],
                    {"airConditionerMode.setAirConditionerMode": {"vals": AC_MODES_SAMSUNG}},
                    ocf="oic.d.airconditioner", pres="DA-AC-RAC-01001"),
    "ac_heat": P("AirConditioner", "midea-c2c-air-conditioner", "Midea", "VIPER", "KFR-35GW",
                 ["switch", "airConditionerMode", "airConditionerFanMode", "fanOscillationMode",
                  "thermostatCoolingSetpoint", "thermostatHeatingSetpoint", "temperatureMeasurement", "healthCheck"],
                 [*ON_OFF, "airConditionerMode.setAirConditionerMode", "thermostatCoolingSetpoint.setCoolingSetpoint",
                  "thermostatHeatingSetpoint.setHeatingSetpoint", "airConditionerFanMode.setFanMode",
                  "fanOscillationMode.setFanOscillationMode"]),
    "ac_basic": P("AirConditioner", "gree-c2c-air-conditioner", "Gree", "VIPER", "KFR-26GW",
                  ["switch", "airConditionerMode", "airConditionerFanMode", "thermostatCoolingSetpoint",
                   "temperatureMeasurement", "healthCheck"],
                  [*ON_OFF, "airConditionerMode.setAirConditionerMode", "thermostatCoolingSetpoint.setCoolingSetpoint",
                   "airConditionerFanMode.setFanMode"]),
    "fan_speed": P("Fan", "tuya-standing-fan", "Tuya", "VIPER", "Smart Standing Fan",
                   ["switch", "fanSpeed", "fanOscillationMode", "healthCheck"],
                   [*ON_OFF, "fanSpeed.setFanSpeed", "fanOscillationMode.setFanOscillationMode"],
                   {"fanOscillationMode.setFanOscillationMode": {"vals": FAN_SWING,
                                                                 "zh": ["设置摇头", "摇头开关"],
                                                                 "en": ["set oscillation"]}}),
    "fan_mode": P("Fan", "xiaomi-smart-fan", "Xiaomi", "VIPER", "Mi Smart Standing Fan 2",
                  ["switch", "fanMode", "fanOscillationMode", "healthCheck"],
                  [*ON_OFF, "fanMode.setFanMode", "fanOscillationMode.setFanOscillationMode"],
                  {"fanOscillationMode.setFanOscillationMode": {"vals": FAN_SWING, "zh": ["设置摇头", "摇头开关"],
                                                                "en": ["set oscillation"]}}),
    "tv_samsung": P("Television", "samsung-ocf-tv", "Samsung Electronics", "OCF", "UA65AU8000",
                    ["switch", "audioVolume", "audioMute", "tvChannel", "mediaInputSource", "mediaPlayback", *HC],
                    [*ON_OFF, "audioVolume.setVolume", "audioVolume.volumeUp", "audioVolume.volumeDown",
                     "audioMute.mute", "audioMute.unmute", "audioMute.setMute", "tvChannel.setTvChannel",
                     "tvChannel.channelUp", "tvChannel.channelDown", "mediaInputSource.setInputSource",
                     "mediaPlayback.play", "mediaPlayback.pause", "mediaPlayback.stop"],
                    ocf="oic.d.tv", pres="VD-STV-2021"),
    "tv_basic": P("Television", "c2c-android-tv", "Xiaomi", "VIPER", "Mi TV ES55",
                  ["switch", "audioVolume", "audioMute", "tvChannel", "healthCheck"],
                  [*ON_OFF, "audioVolume.setVolume", "audioVolume.volumeUp", "audioVolume.volumeDown",
                   "audioMute.mute", "audioMute.unmute", "tvChannel.setTvChannel", "tvChannel.channelUp",
                   "tvChannel.channelDown"]),
    "speaker_sonos": P("NetworkAudio", "sonos-player", "Sonos", "LAN", "Sonos Beam",
                       ["audioVolume", "audioMute", "mediaPlayback", "mediaTrackControl", "mediaPresets", *HC],
                       ["audioVolume.setVolume", "audioVolume.volumeUp", "audioVolume.volumeDown", "audioMute.mute",
                        "audioMute.unmute", "mediaPlayback.play", "mediaPlayback.pause", "mediaPlayback.stop",
                        "mediaTrackControl.nextTrack", "mediaTrackControl.previousTrack", "mediaPresets.playPreset"]),
    "speaker_small": P("NetworkAudio", "c2c-smart-speaker", "Xiaomi", "VIPER", "Xiaoai Speaker Pro",
                       ["audioVolume", "mediaPlayback", "mediaTrackControl", "mediaPlaybackRepeat",
                        "mediaPlaybackShuffle", "healthCheck"],
                       ["audioVolume.setVolume", "audioVolume.volumeUp", "audioVolume.volumeDown",
                        "mediaPlayback.play", "mediaPlayback.pause", "mediaPlayback.stop",
                        "mediaTrackControl.nextTrack", "mediaTrackControl.previousTrack",
                        "mediaPlaybackRepeat.setPlaybackRepeatMode", "mediaPlaybackShuffle.setPlaybackShuffle"]),
    "washer": P("Washer", "samsung-ocf-washer", "Samsung Electronics", "OCF", "WW90T684DLH",
                ["switch", "washerOperatingState", "washerMode", "powerMeter", *HC],
                [*ON_OFF, "washerOperatingState.setMachineState", "washerMode.setWasherMode"],
                ocf="oic.d.washer", pres="DA-WM-WM-000001"),
    "dryer": P("Dryer", "samsung-ocf-dryer", "Samsung Electronics", "OCF", "DV90T6240LH",
               ["switch", "dryerOperatingState", "dryerMode", *HC],
               [*ON_OFF, "dryerOperatingState.setMachineState", "dryerMode.setDryerMode"],
               ocf="oic.d.dryer", pres="DA-WM-WD-000001"),
    "plug_meter": P("SmartPlug", "aqara-smart-plug", "Aqara", "ZIGBEE", "Smart Plug T1",
                    ["switch", "powerMeter", "energyMeter", *HC], [*ON_OFF, "energyMeter.resetEnergyMeter"]),
    "plug_outlet": P("SmartPlug", "zigbee-smart-outlet", "LUMI", "ZIGBEE", "lumi.plug.mmeu01",
                     ["switch", "outlet", "powerMeter", *HC], [*ON_OFF, "outlet.on", "outlet.off"]),
    "switch_wall": P("Switch", "aqara-wall-switch-h1", "Aqara", "ZIGBEE", "Wall Switch H1", ["switch", *HC], ON_OFF),
    "robot": P("RobotCleaner", "samsung-ocf-robot-vacuum", "Samsung Electronics", "OCF", "Jet Bot AI+",
               ["robotCleanerMovement", "robotCleanerCleaningMode", "robotCleanerTurboMode", "battery", *HC],
               ["robotCleanerMovement.setRobotCleanerMovement", "robotCleanerCleaningMode.setRobotCleanerCleaningMode",
                "robotCleanerTurboMode.setRobotCleanerTurboMode"], ocf="oic.d.robotcleaner",
               pres="DA-RVC-NORMAL-000001"),
    "lock": P("Lock", "aqara-smart-lock-u100", "Aqara", "MATTER", "Smart Lock U100", ["lock", "battery", *HC],
              ["lock.lock", "lock.unlock"], vendor=4447, product=8196),
    "garage": P("GarageDoor", "c2c-garage-door", "Chamberlain", "VIPER", "myQ Smart Garage Control",
                ["garageDoorControl", "contactSensor", "healthCheck"],
                ["garageDoorControl.open", "garageDoorControl.close"]),
    "thermo": P("Thermostat", "c2c-floor-heating", "Danfoss", "VIPER", "Icon2 Room Thermostat",
                ["thermostatMode", "thermostatHeatingSetpoint", "temperatureMeasurement", "healthCheck"],
                ["thermostatMode.setThermostatMode", "thermostatMode.heat", "thermostatMode.auto", "thermostatMode.off",
                 "thermostatHeatingSetpoint.setHeatingSetpoint"],
                {"thermostatHeatingSetpoint.setHeatingSetpoint": {"zh": ["设置地暖温度", "设定采暖温度"],
                                                                  "rng": {"C": (5, 35, "C"), "F": (41, 95, "F")}},
                 "thermostatMode.off": {"zh": ["关闭地暖", "关闭采暖"]}}),
    "thermo_en": P("Thermostat", "ecobee-thermostat", "ecobee", "VIPER", "ecobee3 lite",
                   ["thermostatMode", "thermostatCoolingSetpoint", "thermostatHeatingSetpoint", "thermostatFanMode",
                    "temperatureMeasurement", "relativeHumidityMeasurement", "healthCheck"],
                   ["thermostatMode.setThermostatMode", "thermostatMode.heat", "thermostatMode.cool",
                    "thermostatMode.auto", "thermostatMode.off", "thermostatCoolingSetpoint.setCoolingSetpoint",
                    "thermostatHeatingSetpoint.setHeatingSetpoint", "thermostatFanMode.setThermostatFanMode"],
                   {"thermostatMode.setThermostatMode": {"vals": THERMO_EN},
                    "thermostatHeatingSetpoint.setHeatingSetpoint": {"rng": {"C": (7, 26, "C"), "F": (45, 79, "F")}},
                    "thermostatCoolingSetpoint.setCoolingSetpoint": {"rng": {"C": (18, 33, "C"),
                                                                             "F": (65, 92, "F")}}}),
    "evse": P("Charger", "wallbox-pulsar-plus", "Wallbox", "VIPER", "Pulsar Plus",
              ["evseChargingSession", "evseState", "chargingState", "powerMeter", "healthCheck"],
              ["evseChargingSession.enableCharging", "evseChargingSession.disableCharging",
               "evseChargingSession.setMaxCurrent"]),
    "hub": P("Hub", "smartthings-hub-v3", "SmartThings", "HUB", "SmartThings Hub v3", ["healthCheck", "refresh"], [],
             mnmn="SmartThings"),
    "purifier": P("AirPurifier", "xiaomi-air-purifier", "Xiaomi", "VIPER", "Mi Air Purifier 4",
                  ["switch", "airPurifierFanMode", *HC], [*ON_OFF, "airPurifierFanMode.setAirPurifierFanMode"]),
    "humidifier": P("Humidifier", "xiaomi-humidifier", "Xiaomi", "VIPER", "Smart Humidifier 2",
                    ["switch", "humidifierMode", "relativeHumidityMeasurement", "healthCheck"],
                    [*ON_OFF, "humidifierMode.setHumidifierMode"]),
    "fridge": P("Refrigerator", "samsung-ocf-refrigerator", "Samsung Electronics", "OCF", "RF65A977FSR",
                ["contactSensor", "temperatureMeasurement", "thermostatCoolingSetpoint", *HC],
                ["thermostatCoolingSetpoint.setCoolingSetpoint"],
                {"thermostatCoolingSetpoint.setCoolingSetpoint": {"zh": ["设置冷藏温度", "冷藏室温度设定"],
                                                                  "en": ["set fridge temperature"],
                                                                  "rng": {"C": (1, 7, "C"), "F": (34, 44, "F")}}},
                ocf="oic.d.refrigerator", pres="DA-REF-NORMAL-000001"),
    # a category outside SmartThings' standard list: must still be indexable
    "aroma": P("Aroma", "c2c-aroma-diffuser", "Tuya", "VIPER", "Smart Aroma Diffuser",
               ["switch", "switchLevel", "healthCheck"], [*ON_OFF, "switchLevel.setLevel"],
               {"switchLevel.setLevel": {"zh": ["设置香薰浓度", "调节雾化量"], "en": ["set mist intensity"]},
                "switch.on": {"zh": ["打开香薰"]}, "switch.off": {"zh": ["关闭香薰"]}}),
    "motion": P("MotionSensor", "aqara-motion-sensor", "Aqara", "ZIGBEE", "Motion Sensor P1",
                ["motionSensor", "illuminanceMeasurement", "battery", *HC], []),
    "contact": P("ContactSensor", "aqara-door-window-sensor", "Aqara", "ZIGBEE", "Door and Window Sensor",
                 ["contactSensor", "battery", *HC], []),
    "temphum": P("TempHumiditySensor", "aqara-temp-humidity-sensor", "Aqara", "ZIGBEE",
                 "Temperature and Humidity Sensor",
                 ["temperatureMeasurement", "relativeHumidityMeasurement", "battery", *HC], []),
}

# ---------------------------------------------------------------------------------------------------
# Intents: acceptable command alternatives, in order of preference. A device's gold command list is
# the intersection with its profile, so e.g. "open" on a c2c shade accepts its switchLevel position.
# ---------------------------------------------------------------------------------------------------
ALTS = {
    "on": ["switch.on", "outlet.on"],
    "off": ["switch.off", "outlet.off"],
    "level": ["switchLevel.setLevel"],
    "dim": ["switchLevel.setLevel", "statelessSwitchLevelStep.stepLevel"],  # 调暗/调亮一点
    "ct": ["colorTemperature.setColorTemperature"],
    "ct_step": ["colorTemperature.setColorTemperature",
                "statelessColorTemperatureStep.stepColorTemperatureByPercent"],  # 暖一点
    "color": ["colorControl.setColor", "colorControl.setHue"],
    "shade_open": ["windowShade.open", "windowShadeLevel.setShadeLevel", "switchLevel.setLevel"],
    "shade_close": ["windowShade.close", "windowShadeLevel.setShadeLevel", "switchLevel.setLevel"],
    "shade_pause": ["windowShade.pause"],
    "shade_level": ["windowShadeLevel.setShadeLevel", "switchLevel.setLevel"],
    "tilt": ["windowShadeTiltLevel.setShadeTiltLevel"],
    "ac_mode": ["airConditionerMode.setAirConditionerMode"],
    "temp": ["thermostatCoolingSetpoint.setCoolingSetpoint", "thermostatHeatingSetpoint.setHeatingSetpoint"],
    "cool_sp": ["thermostatCoolingSetpoint.setCoolingSetpoint"],
    "heat_sp": ["thermostatHeatingSetpoint.setHeatingSetpoint"],
    "ac_fan": ["airConditionerFanMode.setFanMode"],
    "swing": ["fanOscillationMode.setFanOscillationMode"],
    "ac_opt": ["custom.airConditionerOptionalMode.setAcOptionalMode"],
    "fan_speed": ["fanSpeed.setFanSpeed", "fanMode.setFanMode"],
    "vol": ["audioVolume.setVolume"],
    "vol_up": ["audioVolume.volumeUp", "audioVolume.setVolume"],
    "vol_down": ["audioVolume.volumeDown", "audioVolume.setVolume"],
    "mute": ["audioMute.mute", "audioMute.setMute"],
    "unmute": ["audioMute.unmute", "audioMute.setMute"],
    "channel": ["tvChannel.setTvChannel"],
    "ch_up": ["tvChannel.channelUp"],
    "ch_down": ["tvChannel.channelDown"],
    "ch_change": ["tvChannel.channelUp", "tvChannel.channelDown"],
    "input": ["mediaInputSource.setInputSource"],
    "play": ["mediaPlayback.play"],
    "pause": ["mediaPlayback.pause"],
    "stop": ["mediaPlayback.stop"],
    "next": ["mediaTrackControl.nextTrack"],
    "prev": ["mediaTrackControl.previousTrack"],
    "repeat": ["mediaPlaybackRepeat.setPlaybackRepeatMode"],
    "shuffle": ["mediaPlaybackShuffle.setPlaybackShuffle"],
    "preset": ["mediaPresets.playPreset"],
    "washer_on": ["switch.on", "washerOperatingState.setMachineState"],
    "washer_state": ["washerOperatingState.setMachineState"],  # start / pause / stop a cycle
    "washer_mode": ["washerMode.setWasherMode"],
    "dryer_state": ["dryerOperatingState.setMachineState"],
    "dryer_mode": ["dryerMode.setDryerMode"],
    "robot_start": ["robotCleanerMovement.setRobotCleanerMovement",
                    "robotCleanerCleaningMode.setRobotCleanerCleaningMode"],
    "robot_move": ["robotCleanerMovement.setRobotCleanerMovement"],  # dock / pause
    "robot_mode": ["robotCleanerCleaningMode.setRobotCleanerCleaningMode"],
    "robot_turbo": ["robotCleanerTurboMode.setRobotCleanerTurboMode"],
    "lock": ["lock.lock"],
    "unlock": ["lock.unlock"],
    "garage_open": ["garageDoorControl.open"],
    "garage_close": ["garageDoorControl.close"],
    "thermo_heat": ["thermostatMode.heat", "thermostatMode.setThermostatMode"],
    "thermo_cool": ["thermostatMode.cool", "thermostatMode.setThermostatMode"],
    "thermo_auto": ["thermostatMode.auto", "thermostatMode.setThermostatMode"],
    "thermo_off": ["thermostatMode.off", "thermostatMode.setThermostatMode"],
    "thermo_mode": ["thermostatMode.setThermostatMode"],
    "thermo_fan": ["thermostatFanMode.setThermostatFanMode"],
    "charge_on": ["evseChargingSession.enableCharging"],
    "charge_off": ["evseChargingSession.disableCharging"],
    "charge_current": ["evseChargingSession.setMaxCurrent"],
    "purifier_mode": ["airPurifierFanMode.setAirPurifierFanMode"],
    "humid_mode": ["humidifierMode.setHumidifierMode"],
    "reset_energy": ["energyMeter.resetEnergyMeter"],
}
ACT = {  # default ir.action per intent (Chinese, no Latin letters); most queries pass a more precise one
    "on": "打开", "off": "关闭", "level": "调节亮度", "dim": "调暗", "ct": "调节色温", "ct_step": "调节色温",
    "color": "设置颜色", "shade_open": "打开", "shade_close": "关闭", "shade_pause": "暂停",
    "shade_level": "设置开合度", "tilt": "调节百叶角度", "ac_mode": "设置空调模式", "temp": "设置温度",
    "cool_sp": "设置制冷温度", "heat_sp": "设置制热温度", "ac_fan": "设置风速", "swing": "设置扫风",
    "ac_opt": "设置空调模式", "fan_speed": "设置风速", "vol": "设置音量", "vol_up": "调高音量",
    "vol_down": "调低音量", "mute": "静音", "unmute": "取消静音", "channel": "切换频道", "ch_up": "下一个频道",
    "ch_down": "上一个频道", "ch_change": "换台", "input": "切换信号源", "play": "播放", "pause": "暂停播放",
    "stop": "停止播放", "next": "下一首", "prev": "上一首", "repeat": "设置循环模式", "shuffle": "随机播放",
    "preset": "播放收藏", "washer_on": "打开", "washer_state": "开始洗衣", "washer_mode": "设置洗涤模式",
    "dryer_state": "开始烘干", "dryer_mode": "设置烘干模式", "robot_start": "开始清扫", "robot_move": "回充",
    "robot_mode": "设置清扫模式", "robot_turbo": "设置吸力", "lock": "上锁", "unlock": "开锁",
    "garage_open": "打开", "garage_close": "关闭", "thermo_heat": "开启制热", "thermo_cool": "开启制冷",
    "thermo_auto": "调到自动模式", "thermo_off": "关闭", "thermo_mode": "设置模式", "thermo_fan": "设置风机模式",
    "charge_on": "开始充电", "charge_off": "停止充电", "charge_current": "设置充电电流",
    "purifier_mode": "设置净化模式", "humid_mode": "设置加湿模式", "reset_energy": "电量清零",
}


# Label words that contain a name hint without being that thing: 阳台灯 (balcony light) is no 台灯 (desk lamp).
NAME_FALSE_FRIENDS = {"台灯": ("阳台灯",)}


def name_matches(name: str, label: str) -> bool:
    label = label.lower()
    if name.lower() not in label:
        return False
    return not any(ff in label for ff in NAME_FALSE_FRIENDS.get(name, ()))


def cmd_id(key: str) -> str:
    cap, cmd = key.rsplit(".", 1)
    return f"main-{cap}-{cmd}"


# ---------------------------------------------------------------------------------------------------
# Homes
# ---------------------------------------------------------------------------------------------------
@dataclass
class Device:
    device_id: str
    label: str
    room: str
    pkey: str
    category: str
    profile_id: str
    commands: frozenset  # "cap.cmd" keys

    def alts(self, intent: str) -> list[str]:
        return [cmd_id(k) for k in ALTS[intent] if k in self.commands]


@dataclass
class Home:
    name: str
    lang: str  # query language
    rooms: list[str]
    inventory: list[tuple[str, str, str]]  # (room, profile key, label)
    english_profiles: set[str]
    unit: str = "C"
    devices: list[Device] = field(default_factory=list)
    device_json: list[dict] = field(default_factory=list)
    room_json: list[dict] = field(default_factory=list)
    spec: list[dict] = field(default_factory=list)
    spec_lang: dict[str, str] = field(default_factory=dict)  # profile key -> zh|en
    queries: list[dict] = field(default_factory=list)

    # -- building -----------------------------------------------------------------------------------
    def build(self) -> None:
        ids = random.Random(f"{SEED}/{self.name}/ids")
        spec_rng = random.Random(f"{SEED}/{self.name}/spec")

        def new_uuid() -> str:
            return str(uuid.UUID(int=ids.getrandbits(128), version=4))

        def hexid(n: int) -> str:
            return "".join(ids.choice("0123456789ABCDEF") for _ in range(n))

        location_id, owner_id = new_uuid(), new_uuid()
        base = datetime(2022, 3, 1, 8, 0, 0)
        room_ids = {}
        for room in self.rooms:
            room_ids[room] = new_uuid()
            created = base + timedelta(seconds=ids.randrange(0, 3600 * 24 * 30))
            self.room_json.append({"roomId": room_ids[room], "locationId": location_id, "name": room,
                                   "backgroundImage": None, "created": _ts(created, ids),
                                   "lastModified": _ts(created + timedelta(days=ids.randrange(1, 400)), ids)})
        # profiles, in order of first use
        profile_ids, profile_extra = {}, {}
        for _, pkey, _ in self.inventory:
            if pkey in profile_ids:
                continue
            if pkey not in PT:
                raise SystemExit(f"{self.name}: unknown profile template {pkey!r}")
            profile_ids[pkey] = new_uuid()
            profile_extra[pkey] = {"endpoint": "viper_" + new_uuid(), "driver": new_uuid(), "pres": "ST_" + new_uuid()}
            lang = "en" if (self.lang == "en" or pkey in self.english_profiles) else "zh"
            self.spec_lang[pkey] = lang
            entries = [self._spec_entry(k, PT[pkey], lang, spec_rng) for k in PT[pkey]["cmds"]]
            self.spec.append({"profileId": profile_ids[pkey], "capabilities": entries})
        hub_id = None
        dev_ids = [new_uuid() for _ in self.inventory]
        for (_, pkey, _), dev_id in zip(self.inventory, dev_ids, strict=True):
            if pkey == "hub" and hub_id is None:
                hub_id = dev_id
        for (room, pkey, label), dev_id in zip(self.inventory, dev_ids, strict=True):
            if room not in room_ids:
                raise SystemExit(f"{self.name}: device {label!r} is in unknown room {room!r}")
            t = PT[pkey]
            created = base + timedelta(seconds=ids.randrange(3600 * 24 * 31, 3600 * 24 * 900))
            extra = profile_extra[pkey]
            conn = t["conn"]
            if conn in ("ZIGBEE", "MATTER", "LAN") and hub_id is None:
                raise SystemExit(f"{self.name}: {conn} device {label!r} needs a hub in the inventory")
            d = {
                "deviceId": dev_id, "name": t["name"], "label": label,
                "manufacturerName": t.get("mnmn") or ("Samsung Electronics" if conn == "OCF" else
                                                      "SmartThingsCommunity" if conn in ("ZIGBEE", "MATTER", "LAN")
                                                      else "SmartThings"),
                "presentationId": t.get("pres") or extra["pres"],
                "deviceManufacturerCode": t["mfr"], "locationId": location_id, "ownerId": owner_id,
                "roomId": room_ids[room],
                "components": [{"id": "main", "label": "main",
                                "capabilities": [{"id": c, "version": 1} for c in t["caps"]],
                                "categories": [{"name": t["cat"], "categoryType": "manufacturer"}]}],
                "createTime": _ts(created, ids), "profile": {"id": profile_ids[pkey]},
            }
            if conn == "VIPER":
                d["viper"] = {"manufacturerName": t["mfr"], "modelName": t["model"],
                              "swVersion": f"1.{ids.randrange(40, 130)}.{ids.randrange(0, 9)}",
                              "hwVersion": t.get("hw", t["model"]), "endpointAppId": extra["endpoint"]}
            elif conn == "ZIGBEE":
                d["zigbee"] = {"eui": hexid(16), "networkId": hexid(4), "driverId": extra["driver"],
                               "executingLocally": True, "hubId": hub_id, "provisioningState": "PROVISIONED"}
            elif conn == "MATTER":
                d["matter"] = {"driverId": extra["driver"], "hubId": hub_id, "provisioningState": "PROVISIONED",
                               "networkId": hexid(16), "executingLocally": True, "vendorId": t["vendor"],
                               "productId": t["product"]}
            elif conn == "LAN":
                d["lan"] = {"networkId": hexid(12), "driverId": extra["driver"], "executingLocally": True,
                            "hubId": hub_id, "provisioningState": "PROVISIONED"}
            elif conn == "OCF":
                d["ocf"] = {"ocfDeviceType": t["ocf"], "name": t["model"], "specVersion": "core.1.1.0",
                            "verticalDomainSpecVersion": "1.2.1", "manufacturerName": "Samsung Electronics",
                            "modelNumber": t["model"], "vendorId": t["pres"], "lastSignupTime": _ts(created, ids)}
            elif conn == "HUB":
                d["hub"] = {"hubEui": hexid(16), "firmwareVersion": "000.056.00012"}
            d.update({"type": conn, "restrictionTier": 0, "allowed": [],
                      "executionContext": "LOCAL" if conn in ("ZIGBEE", "MATTER", "LAN", "HUB") else "CLOUD"})
            self.device_json.append(d)
            self.devices.append(Device(dev_id, label, room, pkey, t["cat"], profile_ids[pkey], frozenset(t["cmds"])))

    def _spec_entry(self, key: str, t: dict, lang: str, rng: random.Random) -> dict:
        base, ov = CMD[key], t["ov"].get(key, {})
        pool = ov.get(lang) or base[lang]
        rng_ = ov.get("rng", base["range"])
        if isinstance(rng_, dict):
            rng_ = rng_[self.unit]
        vals = ov.get("vals", base["vals"])
        entry = {"id": cmd_id(key), "description": rng.choice(pool), "type": base["type"],
                 "value_range": None if rng_ is None else {"min": rng_[0], "max": rng_[1], "unit": rng_[2]}}
        if vals:
            entry["value_list"] = [{"value": v, "description": zh if lang == "zh" else en} for v, zh, en in vals]
        return entry

    # -- lookups ------------------------------------------------------------------------------------
    def select(self, intent, th, name, inc, exc) -> list[Device]:
        if th == "Unknown" and not name:
            raise ValueError("a query with type_hint Unknown must carry a name_hint")
        out = []
        for d in self.devices:
            if th != "Unknown" and d.category != th:
                continue
            if name and not name_matches(name, d.label):
                continue
            if inc and d.room not in inc:
                continue
            if d.room in exc:
                continue
            if d.alts(intent):
                out.append(d)
        return out

    def find(self, label: str, room: str | None = None) -> Device:
        found = [d for d in self.devices if d.label == label and (room is None or d.room == room)]
        if len(found) != 1:
            raise SystemExit(f"{self.name}: find({label!r}, {room!r}) matched {len(found)} devices")
        return found[0]


def _ts(t: datetime, rng: random.Random) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rng.randrange(0, 1000):03d}Z"


class Book:
    """Collects one home's queries; gold targets are derived from the ideal parse (see Home.select)."""

    def __init__(self, home: Home):
        self.home = home
        self.rng = random.Random(f"{SEED}/{home.name}/queries")
        self.rows: list[dict] = []
        self.texts: set[str] = set()

    def q(self, text, intent, th, name="", inc=(), exc=(), quant="one", act=None, devs=None):
        if text in self.texts:
            raise SystemExit(f"{self.home.name}: duplicate query text {text!r}")
        if intent not in ALTS:
            raise SystemExit(f"{self.home.name}: {text!r}: unknown intent {intent!r}")
        self.texts.add(text)
        inc, exc = list(inc), list(exc)
        try:
            derived = self.home.select(intent, th, name, inc, exc)
        except ValueError as e:
            raise SystemExit(f"{self.home.name}: {text!r}: {e}") from None
        if devs is not None:  # explicit targets: the user's words say more than the name/room rule can
            targets = [self.home.find(*d) if isinstance(d, tuple) else self.home.find(d) for d in devs]
        else:
            targets = derived
        if not targets:
            raise SystemExit(f"{self.home.name}: {text!r}: no device matches intent={intent} type={th} "
                             f"name={name!r} inc={inc} exc={exc}")
        expected = []
        for d in targets:
            alts = d.alts(intent)
            if not alts:
                raise SystemExit(f"{self.home.name}: {text!r}: {d.label} ({d.room}) has no command for {intent}")
            expected.append({"device_id": d.device_id, "command_id": alts[0] if len(alts) == 1 else alts})
        self.rows.append({"query": text, "expected": expected, "quantifier": quant,
                          "ir": {"action": act or ACT[intent], "type_hint": th, "name_hint": name,
                                 "scope_include": inc, "scope_exclude": exc, "quantifier": quant}})

    def pick(self, pool, **slots) -> str:
        """A phrasing from `pool` not used yet in this home (deterministic)."""
        options = [p.format(**slots) for p in pool]
        fresh = [o for o in options if o not in self.texts]
        if not fresh:
            raise SystemExit(f"{self.home.name}: every phrasing of {pool[0]!r} is used for {slots}")
        return self.rng.choice(fresh)

    def finish(self) -> list[dict]:
        """Number each query from a hash of its text, so an id (and its hash-based split) survives edits
        elsewhere in the file; collisions go to the next free number, in hash order."""
        def digest(row):
            return hashlib.sha256(f"{self.home.name}/{row['query']}".encode()).hexdigest()

        taken, out = set(), []
        for row in sorted(self.rows, key=digest):
            n = int(digest(row), 16) % 9999 + 1
            while n in taken:
                n = n % 9999 + 1
            taken.add(n)
            out.append({"id": f"{self.home.name}-{n:04d}", **row})
        return sorted(out, key=lambda r: r["id"])


# Phrase pools for the per-room loops (the rest of the queries are written out one by one below).
ON_LIGHT_ZH = ["打开{r}的灯", "{r}开灯", "把{r}的灯打开", "开一下{r}的灯", "帮我开{r}的灯", "{r}的灯开一下",
               "开启{r}的照明", "{r}好暗，把灯打开", "把{r}灯开了", "请打开{r}的灯光", "{r}的灯帮我打开", "开{r}灯",
               "麻烦把{r}的灯开开", "{r}的灯亮起来"]
OFF_LIGHT_ZH = ["关掉{r}的灯", "{r}关灯", "把{r}的灯关了", "关闭{r}的灯", "熄灭{r}的灯", "{r}的灯关一下",
                "帮我把{r}的灯关掉", "{r}的灯光关闭", "把{r}的灯熄了", "{r}没人了，灯关掉吧", "关{r}灯",
                "{r}的灯不用开了"]
LEVEL_ZH = ["把{r}的灯调到{v}%", "{r}灯光亮度调到{v}%", "{r}的灯亮度设为{v}", "{r}灯调到百分之{vz}",
            "把{r}的亮度调成{v}%", "{r}的灯开到{v}%亮度"]
DIM_ZH = ["{r}的灯调暗一点", "把{r}灯光调暗些", "{r}太亮了，灯暗一点", "{r}的灯暗一些", "{r}灯光再暗点"]
BRIGHT_ZH = ["{r}的灯再亮一点", "把{r}的灯调亮一些", "{r}灯光调亮点", "{r}有点暗，灯亮一点", "{r}的灯亮度加大一点"]
ON_LIGHT_EN = ["turn on the {r} lights", "switch on the lights in the {r}", "{r} lights on",
               "can you turn the {r} lights on", "lights on in the {r} please", "put the {r} lights on"]
OFF_LIGHT_EN = ["turn off the {r} lights", "switch off the lights in the {r}", "{r} lights off",
                "kill the lights in the {r}", "shut off the {r} lights", "lights off in the {r}"]
NUM_ZH = {10: "十", 20: "二十", 30: "三十", 40: "四十", 50: "五十", 60: "六十", 70: "七十", 80: "八十", 90: "九十"}


def room_light_loop(b: Book, rooms_on, rooms_off, aliases, lang="zh"):
    on_pool, off_pool = (ON_LIGHT_ZH, OFF_LIGHT_ZH) if lang == "zh" else (ON_LIGHT_EN, OFF_LIGHT_EN)
    for room in rooms_on:
        r = b.rng.choice(aliases.get(room, [room]))
        b.q(b.pick(on_pool, r=r), "on", "Light", inc=[room])
    for room in rooms_off:
        r = b.rng.choice(aliases.get(room, [room]))
        b.q(b.pick(off_pool, r=r), "off", "Light", inc=[room])


def room_level_loop(b: Book, rooms, aliases):
    for room in rooms:
        r = b.rng.choice(aliases.get(room, [room]))
        v = b.rng.choice([10, 20, 30, 40, 60, 70, 80])
        text = b.pick(LEVEL_ZH, r=r, v=v, vz=NUM_ZH[v])
        b.q(text, "level", "Light", inc=[room], act=f"亮度调到{v}%")


def room_dim_loop(b: Book, rooms, aliases):
    for i, room in enumerate(rooms):
        r = b.rng.choice(aliases.get(room, [room]))
        if i % 2 == 0:
            b.q(b.pick(DIM_ZH, r=r), "dim", "Light", inc=[room], act="调暗一点")
        else:
            b.q(b.pick(BRIGHT_ZH, r=r), "dim", "Light", inc=[room], act="调亮一点")


# =================================================================================================
# home_small: a two-bedroom flat
# =================================================================================================
def home_small() -> Home:
    inv = [
        ("客厅", "hub", "SmartThings Hub"),
        ("客厅", "light_ceiling", "吸顶灯"),
        ("客厅", "light_rgb", "老伙计"),           # the floor lamp, known by its nickname
        ("客厅", "shade_tilt", "百叶窗帘"),        # a shade with tilt next to the lights
        ("客厅", "tv_samsung", "客厅电视"),
        ("客厅", "ac_samsung", "客厅空调"),
        ("客厅", "lock", "入户门锁"),
        ("客厅", "robot", "小白"),
        ("客厅", "motion", "人体传感器"),
        ("主卧", "light_ceiling", "吸顶灯"),       # same label as the living-room one (users call 主卧 "卧室")
        ("主卧", "light_step", "床头灯"),
        ("主卧", "ac_basic", "主卧空调"),
        ("主卧", "shade_level", "主卧窗帘"),
        ("书房", "light_dim", "客厅台灯"),         # moved from the living room, label kept
        ("书房", "fan_speed", "落地扇"),
        ("厨房", "light_onoff", "厨房灯"),
        ("厨房", "plug_meter", "冰箱插座"),
        ("阳台", "washer", "洗衣机"),
    ]
    return Home("home_small", "zh", ["客厅", "主卧", "书房", "厨房", "阳台"], inv, set())


def queries_small(b: Book):
    q = b.q
    # the design note's failure cases
    q("打开客厅的灯", "on", "Light", inc=["客厅"])
    q("把客厅灯光调到50%", "level", "Light", inc=["客厅"], act="亮度调到50%")
    q("把灯光调到50%", "level", "Light", act="亮度调到50%")
    # custom names, room words in names, duplicate labels
    q("打开老伙计", "on", "Unknown", "老伙计")
    q("老伙计调成暖光", "ct", "Unknown", "老伙计", act="调成暖光")
    q("把老伙计换成红色", "color", "Unknown", "老伙计", act="调成红色")
    q("书房的灯开一下", "on", "Light", inc=["书房"])
    q("关掉客厅台灯", "off", "Light", "客厅台灯")
    q("打开主卧的灯", "on", "Light", inc=["主卧"])
    q("把主卧吸顶灯关了", "off", "Light", "吸顶灯", inc=["主卧"])
    q("开一下吸顶灯", "on", "Light", "吸顶灯")
    q("客厅吸顶灯亮度调到80", "level", "Light", "吸顶灯", inc=["客厅"], act="亮度调到80%")
    q("床头灯调暗一点", "dim", "Light", "床头灯", act="调暗一点")
    q("床头灯再亮一些", "dim", "Light", "床头灯", act="调亮一点")
    q("把床头灯色温调到4000K", "ct", "Light", "床头灯", act="调节色温")
    q("床头灯暖一点", "ct_step", "Light", "床头灯", act="调暖一点")
    q("厨房灯关一下", "off", "Light", inc=["厨房"])
    q("把客厅的灯调成冷白光", "ct", "Light", inc=["客厅"], act="调成冷白光")
    q("客厅有点暗，灯再亮一点", "dim", "Light", inc=["客厅"], act="调亮一点")
    # blinds
    q("把客厅窗帘打开", "shade_open", "Blind", "窗帘", inc=["客厅"], act="打开窗帘")
    q("主卧窗帘开一半", "shade_level", "Blind", "窗帘", inc=["主卧"], act="打开一半")
    q("百叶窗帘叶片角度调到30", "tilt", "Blind", "百叶窗帘", act="调节百叶角度")
    q("卧室窗帘停一下", "shade_pause", "Blind", "窗帘", inc=["主卧"], act="暂停")
    q("卧室窗帘拉上", "shade_close", "Blind", "窗帘", inc=["主卧"], act="关闭窗帘")
    # air conditioners
    q("打开客厅空调", "on", "AirConditioner", inc=["客厅"])
    q("客厅空调调到制冷", "ac_mode", "AirConditioner", inc=["客厅"], act="调到制冷模式")
    q("卧室空调开除湿", "ac_mode", "AirConditioner", inc=["主卧"], act="调到除湿模式")
    q("客厅空调调到26度", "temp", "AirConditioner", inc=["客厅"], act="温度调到26度")
    q("把主卧空调调到26度", "temp", "AirConditioner", inc=["主卧"], act="温度调到26度")
    q("把客厅空调风速调到低风", "ac_fan", "AirConditioner", inc=["客厅"], act="风速调到低风")
    q("客厅空调开启上下扫风", "swing", "AirConditioner", inc=["客厅"], act="开启上下扫风")
    q("客厅空调开睡眠模式", "ac_opt", "AirConditioner", inc=["客厅"], act="开启睡眠模式")
    q("卧室太热了，空调开到制冷", "ac_mode", "AirConditioner", inc=["主卧"], act="调到制冷模式")
    # fan
    q("风扇开到最大档", "fan_speed", "Fan", act="风速调到最大")
    q("打开落地扇", "on", "Fan", "落地扇")
    q("落地扇摇头", "swing", "Fan", "落地扇", act="开启摇头")
    # TV
    q("电视声音大一点", "vol_up", "Television", act="调高音量")
    q("电视音量调到20", "vol", "Television", act="音量调到20")
    q("电视静音", "mute", "Television")
    q("电视换到5频道", "channel", "Television", act="切换到5频道")
    q("换下一个台", "ch_up", "Television")
    q("电视切到HDMI1", "input", "Television", act="切换信号源")
    q("关电视", "off", "Television")
    q("电视先暂停一下", "pause", "Television", act="暂停播放")
    # washer, robot, lock, plug
    q("启动洗衣机", "washer_state", "Washer", act="开始洗衣")
    q("洗衣机换成漂洗模式", "washer_mode", "Washer", act="切换到漂洗模式")
    q("让小白开始扫地", "robot_start", "Unknown", "小白", act="开始扫地")
    q("小白回去充电", "robot_move", "Unknown", "小白", act="返回充电")
    q("扫地机器人暂停", "robot_move", "RobotCleaner", act="暂停清扫")
    q("锁门", "lock", "Lock")
    q("把门锁打开", "unlock", "Lock")
    q("冰箱插座通电", "on", "SmartPlug", "冰箱插座", act="通电")
    # bulk: all
    q("关掉所有的灯", "off", "Light", quant="all")
    q("把家里的灯全部打开", "on", "Light", quant="all")
    q("所有灯调到30%", "level", "Light", quant="all", act="亮度调到30%")
    q("把灯都调暗一点", "dim", "Light", quant="all", act="调暗一点")
    q("帮我把主卧的灯全部关掉", "off", "Light", inc=["主卧"], quant="all")
    q("把全部窗帘都关上", "shade_close", "Blind", quant="all", act="关闭窗帘")
    q("所有窗帘都打开", "shade_open", "Blind", quant="all", act="打开窗帘")
    q("所有空调都调到制冷", "ac_mode", "AirConditioner", quant="all", act="调到制冷模式")
    q("把空调全关了", "off", "AirConditioner", quant="all")
    # bulk: except
    q("除了卧室，其他灯都关掉", "off", "Light", exc=["主卧"], quant="except")
    q("除了客厅以外的灯都打开", "on", "Light", exc=["客厅"], quant="except")
    q("除了厨房，别的灯都调到60%", "level", "Light", exc=["厨房"], quant="except", act="亮度调到60%")
    q("除了主卧，其他空调都关了", "off", "AirConditioner", exc=["主卧"], quant="except")
    q("除了客厅，其他窗帘都拉上", "shade_close", "Blind", exc=["客厅"], quant="except", act="关闭窗帘")
    # any
    q("随便开一盏灯", "on", "Light", quant="any")


# =================================================================================================
# home_medium: a family flat with eleven rooms
# =================================================================================================
def home_medium() -> Home:
    inv = [
        ("玄关", "light_onoff", "玄关灯"), ("玄关", "lock", "智能门锁"),
        ("客厅", "hub", "SmartThings Hub"), ("客厅", "light_ceiling", "吸顶灯"),
        *[("客厅", "light_dim", f"筒灯{i}") for i in range(1, 5)],
        ("客厅", "light_rgb", "灯带"), ("客厅", "light_rgb", "Hue Go"),
        ("客厅", "shade_tilt", "客厅窗帘"), ("客厅", "shade_level", "客厅纱帘"),
        ("客厅", "tv_samsung", "客厅电视"), ("客厅", "speaker_sonos", "Sonos Beam"),
        ("客厅", "ac_samsung", "客厅空调"), ("客厅", "purifier", "大白"), ("客厅", "robot", "Bob"),
        ("客厅", "fan_mode", "小米风扇"), ("客厅", "temphum", "温湿度计"),
        ("餐厅", "light_ceiling", "餐厅吊灯"), ("餐厅", "light_dim", "餐厅筒灯1"),
        ("餐厅", "light_dim", "餐厅筒灯2"),
        ("厨房", "light_onoff", "厨房灯"), ("厨房", "fridge", "冰箱"), ("厨房", "plug_meter", "电饭煲插座"),
        ("厨房", "plug_outlet", "热水壶插座"), ("厨房", "speaker_small", "厨房音箱"),
        ("主卧", "light_ceiling", "吸顶灯"), ("主卧", "light_step", "床头灯左"),
        ("主卧", "light_step", "床头灯右"),
        ("主卧", "shade_level", "主卧窗帘"), ("主卧", "shade_level", "主卧纱帘"),
        ("主卧", "ac_heat", "主卧空调"),
        ("主卧", "humidifier", "加湿器"), ("主卧", "aroma", "香薰机"), ("主卧", "tv_samsung", "主卧电视"),
        ("次卧", "light_ceiling", "吸顶灯"), ("次卧", "ac_basic", "次卧空调"),
        ("次卧", "shade_level", "次卧窗帘"),
        ("次卧", "fan_mode", "落地扇"),
        ("儿童房", "light_rgb", "卧室小夜灯"), ("儿童房", "light_rgb", "星空灯"),
        ("儿童房", "ac_basic", "儿童房空调"),
        ("儿童房", "shade_level", "儿童房窗帘"), ("儿童房", "temphum", "温湿度计"),
        ("书房", "light_dim", "客厅老伙计"), ("书房", "light_dim", "台灯"),
        ("书房", "light_ceiling", "吸顶灯"),
        ("书房", "ac_basic", "书房空调"), ("书房", "shade_tilt", "书房百叶窗"),
        ("书房", "speaker_small", "书房音箱"),
        ("书房", "plug_meter", "显示器插座"),
        ("主卫", "light_onoff", "镜前灯"), ("主卫", "switch_wall", "浴霸"), ("主卫", "switch_wall", "排气扇"),
        ("客卫", "light_onoff", "客卫灯"), ("客卫", "switch_wall", "排气扇"),
        ("阳台", "light_onoff", "阳台灯"), ("阳台", "washer", "洗衣机"), ("阳台", "dryer", "烘干机"),
        ("阳台", "motion", "人体传感器"),
    ]
    rooms = ["玄关", "客厅", "餐厅", "厨房", "主卧", "次卧", "儿童房", "书房", "主卫", "客卫", "阳台"]
    english = {"light_rgb", "speaker_sonos", "robot", "plug_meter", "dryer", "light_step", "shade_tilt"}
    return Home("home_medium", "zh", rooms, inv, english)


def queries_medium(b: Book):
    q = b.q
    room_light_loop(b, ["餐厅", "次卧", "阳台", "儿童房"], ["餐厅", "主卫"], {})
    # failure cases
    q("打开客厅的灯", "on", "Light", inc=["客厅"])
    q("把客厅的灯光调到50%", "level", "Light", inc=["客厅"], act="亮度调到50%")
    q("书房灯光调到50%", "level", "Light", inc=["书房"], act="亮度调到50%")
    # lights by name / room
    q("客厅灯带调成紫色", "color", "Light", "灯带", inc=["客厅"], act="调成紫色")
    q("打开Hue Go", "on", "Unknown", "Hue Go")
    q("把Hue Go亮度调到60%", "level", "Unknown", "Hue Go", act="亮度调到60%")
    q("Hue Go换成暖黄光", "ct", "Unknown", "Hue Go", act="调成暖光")
    q("打开老伙计", "on", "Unknown", "老伙计")
    q("客厅老伙计关一下", "off", "Unknown", "客厅老伙计")
    q("把客厅老伙计调暗", "dim", "Unknown", "客厅老伙计", act="调暗一点")
    q("书房开灯", "on", "Light", inc=["书房"])
    q("打开书房台灯", "on", "Light", "台灯", inc=["书房"])
    q("台灯亮度调到百分之四十", "level", "Light", "台灯", act="亮度调到40%")
    q("打开卧室小夜灯", "on", "Light", "卧室小夜灯")
    q("关掉儿童房的小夜灯", "off", "Light", "小夜灯", inc=["儿童房"])
    q("小夜灯调到10%", "level", "Light", "小夜灯", act="亮度调到10%")
    q("卧室小夜灯换成橙色", "color", "Light", "卧室小夜灯", act="调成橙色")
    q("星空灯开一下", "on", "Light", "星空灯")
    q("星空灯换成蓝色", "color", "Light", "星空灯", act="调成蓝色")
    q("打开主卧的灯", "on", "Light", inc=["主卧"])
    q("主卧吸顶灯关掉", "off", "Light", "吸顶灯", inc=["主卧"])
    q("次卧吸顶灯调到70%", "level", "Light", "吸顶灯", inc=["次卧"], act="亮度调到70%")
    q("床头灯调暗一点", "dim", "Light", "床头灯", act="调暗一点")
    q("把左边床头灯关了", "off", "Light", "床头灯左", devs=["床头灯左"])
    q("右边床头灯色温调高一点", "ct_step", "Light", "床头灯右", act="调高色温", devs=["床头灯右"])
    q("主卧灯光调成暖光", "ct", "Light", inc=["主卧"], act="调成暖光")
    q("餐厅吊灯亮度调到70%", "level", "Light", "吊灯", inc=["餐厅"], act="亮度调到70%")
    q("客厅筒灯调到30%", "level", "Light", "筒灯", inc=["客厅"], act="亮度调到30%")
    q("筒灯3关一下", "off", "Light", "筒灯3")
    q("把玄关灯打开", "on", "Light", inc=["玄关"])
    q("镜前灯开一下", "on", "Light", "镜前灯")
    q("把客卫的灯关了", "off", "Light", inc=["客卫"])
    q("厨房灯熄灭", "off", "Light", inc=["厨房"])
    q("客厅太亮了，调暗一点", "dim", "Light", inc=["客厅"], act="调暗一点")
    q("客厅的灯调成冷白光", "ct", "Light", inc=["客厅"], act="调成冷白光")
    q("客厅灯光调到百分之八十", "level", "Light", inc=["客厅"], act="亮度调到80%")
    q("打开主卧和书房的灯", "on", "Light", inc=["主卧", "书房"])
    q("关闭玄关灯", "off", "Light", inc=["玄关"])
    q("书房的灯暖一点", "ct_step", "Light", inc=["书房"], act="调暖一点")
    # blinds
    q("客厅窗帘打开", "shade_open", "Blind", "窗帘", inc=["客厅"], act="打开窗帘")
    q("客厅纱帘拉上", "shade_close", "Blind", "纱帘", inc=["客厅"], act="关闭纱帘")
    q("客厅窗帘叶片角度调到60%", "tilt", "Blind", "窗帘", inc=["客厅"], act="调节百叶角度")
    q("主卧窗帘开一半", "shade_level", "Blind", "窗帘", inc=["主卧"], act="打开一半")
    q("主卧纱帘开到30%", "shade_level", "Blind", "纱帘", inc=["主卧"], act="打开到30%")
    q("把次卧窗帘关上", "shade_close", "Blind", "窗帘", inc=["次卧"], act="关闭窗帘")
    q("儿童房窗帘停一下", "shade_pause", "Blind", "窗帘", inc=["儿童房"], act="暂停")
    q("书房百叶窗打开", "shade_open", "Blind", "百叶窗", inc=["书房"], act="打开百叶窗")
    q("书房百叶窗角度调到45%", "tilt", "Blind", "百叶窗", inc=["书房"], act="调节百叶角度")
    q("客厅纱帘开到一半", "shade_level", "Blind", "纱帘", inc=["客厅"], act="打开一半")
    q("拉开儿童房的窗帘", "shade_open", "Blind", "窗帘", inc=["儿童房"], act="打开窗帘")
    # air conditioners
    q("打开客厅空调", "on", "AirConditioner", inc=["客厅"])
    q("客厅空调调到制冷", "ac_mode", "AirConditioner", inc=["客厅"], act="调到制冷模式")
    q("客厅空调温度调到26度", "temp", "AirConditioner", inc=["客厅"], act="温度调到26度")
    q("客厅空调开无风感", "ac_opt", "AirConditioner", inc=["客厅"], act="开启无风感模式")
    q("客厅空调风速调大", "ac_fan", "AirConditioner", inc=["客厅"], act="调大风速")
    q("客厅空调左右扫风", "swing", "AirConditioner", inc=["客厅"], act="开启左右扫风")
    q("主卧空调开制热", "ac_mode", "AirConditioner", inc=["主卧"], act="调到制热模式")
    q("主卧空调调到28度", "temp", "AirConditioner", inc=["主卧"], act="温度调到28度")
    q("把主卧空调制热温度设成27度", "heat_sp", "AirConditioner", inc=["主卧"], act="制热温度调到27度")
    q("主卧空调风速自动", "ac_fan", "AirConditioner", inc=["主卧"], act="风速调到自动")
    q("次卧空调开一下", "on", "AirConditioner", inc=["次卧"])
    q("次卧空调除湿", "ac_mode", "AirConditioner", inc=["次卧"], act="调到除湿模式")
    q("儿童房空调调到二十五度", "temp", "AirConditioner", inc=["儿童房"], act="温度调到25度")
    q("儿童房空调风速调到低风", "ac_fan", "AirConditioner", inc=["儿童房"], act="风速调到低风")
    q("书房空调关掉", "off", "AirConditioner", inc=["书房"])
    q("书房空调切到送风模式", "ac_mode", "AirConditioner", inc=["书房"], act="调到送风模式")
    q("关掉客厅空调", "off", "AirConditioner", inc=["客厅"])
    q("客厅温度太高了，空调开到24度", "temp", "AirConditioner", inc=["客厅"], act="温度调到24度")
    # fans
    q("打开小米风扇", "on", "Fan", "小米风扇")
    q("客厅风扇调到高速", "fan_speed", "Fan", inc=["客厅"], act="风速调到高速")
    q("次卧落地扇开摇头", "swing", "Fan", "落地扇", inc=["次卧"], act="开启摇头")
    q("把落地扇关了", "off", "Fan", "落地扇")
    # TVs
    q("打开客厅电视", "on", "Television", inc=["客厅"])
    q("客厅电视声音大一点", "vol_up", "Television", inc=["客厅"], act="调高音量")
    q("主卧电视音量调到15", "vol", "Television", inc=["主卧"], act="音量调到15")
    q("主卧电视静音", "mute", "Television", inc=["主卧"])
    q("客厅电视取消静音", "unmute", "Television", inc=["客厅"])
    q("客厅电视换到13台", "channel", "Television", inc=["客厅"], act="切换到13频道")
    q("主卧电视下一个台", "ch_up", "Television", inc=["主卧"])
    q("主卧电视换回上一个频道", "ch_down", "Television", inc=["主卧"])
    q("客厅电视切到HDMI2", "input", "Television", inc=["客厅"], act="切换信号源")
    q("客厅电视暂停", "pause", "Television", inc=["客厅"], act="暂停播放")
    q("主卧电视音量调低", "vol_down", "Television", inc=["主卧"])
    # speakers
    q("Sonos Beam音量调到30", "vol", "Unknown", "Sonos Beam", act="音量调到30")
    q("暂停Sonos Beam", "pause", "Unknown", "Sonos Beam", act="暂停播放")
    q("书房音箱放首歌", "play", "NetworkAudio", inc=["书房"], act="播放音乐")
    q("书房音箱下一首", "next", "NetworkAudio", inc=["书房"])
    q("厨房音箱暂停", "pause", "NetworkAudio", inc=["厨房"], act="暂停播放")
    q("厨房音箱声音小一点", "vol_down", "NetworkAudio", inc=["厨房"])
    q("书房音箱单曲循环", "repeat", "NetworkAudio", inc=["书房"], act="设置单曲循环")
    q("厨房音箱随机播放", "shuffle", "NetworkAudio", inc=["厨房"])
    # appliances
    q("启动洗衣机", "washer_state", "Washer", act="开始洗衣")
    q("洗衣机暂停一下", "washer_state", "Washer", act="暂停洗衣")
    q("洗衣机换成强力洗", "washer_mode", "Washer", act="切换到强力洗")
    q("打开洗衣机", "washer_on", "Washer")
    q("洗衣机开始脱水", "washer_mode", "Washer", act="切换到脱水")
    q("烘干机开始烘干", "dryer_state", "Dryer", act="开始烘干")
    q("烘干机用低温烘干", "dryer_mode", "Dryer", act="切换到低温烘干")
    q("关掉烘干机", "off", "Dryer")
    q("让Bob开始扫地", "robot_start", "Unknown", "Bob", act="开始扫地")
    q("Bob回去充电", "robot_move", "Unknown", "Bob", act="返回充电")
    q("Bob开强力模式", "robot_turbo", "Unknown", "Bob", act="开启强力吸尘")
    q("扫地机器人局部清扫", "robot_mode", "RobotCleaner", act="局部清扫")
    q("暂停扫地", "robot_move", "RobotCleaner", act="暂停清扫")
    q("扫地机器人开始工作", "robot_start", "RobotCleaner", act="开始清扫")
    q("锁门", "lock", "Lock")
    q("把门锁打开", "unlock", "Lock")
    q("打开大白", "on", "Unknown", "大白")
    q("大白调到睡眠模式", "purifier_mode", "Unknown", "大白", act="调到睡眠模式")
    q("空气净化器开到高速", "purifier_mode", "AirPurifier", act="调到高速")
    q("关掉加湿器", "off", "Humidifier")
    q("加湿器调到中档", "humid_mode", "Humidifier", act="调到中档")
    q("打开香薰机", "on", "Unknown", "香薰机")
    q("香薰机浓度调低一点", "level", "Unknown", "香薰机", act="调低浓度")
    q("香薰机关掉", "off", "Unknown", "香薰机")
    q("冰箱冷藏温度调到4度", "cool_sp", "Refrigerator", act="冷藏温度调到4度")
    q("关掉电饭煲插座", "off", "SmartPlug", "电饭煲插座")
    q("热水壶插座通电", "on", "SmartPlug", "热水壶插座", act="通电")
    q("显示器插座断电", "off", "SmartPlug", "显示器插座", act="断电")
    q("显示器插座电量清零", "reset_energy", "SmartPlug", "显示器插座")
    q("打开浴霸", "on", "Switch", "浴霸")
    q("排气扇开一下", "on", "Switch", "排气扇")
    q("关掉主卫的排气扇", "off", "Switch", "排气扇", inc=["主卫"])
    # bulk: all
    q("关掉所有的灯", "off", "Light", quant="all")
    q("把家里的灯全部打开", "on", "Light", quant="all")
    q("所有灯调到40%", "level", "Light", quant="all", act="亮度调到40%")
    q("全屋灯光调暗一点", "dim", "Light", quant="all", act="调暗一点")
    q("所有的灯都换成暖光", "ct", "Light", quant="all", act="调成暖光")
    q("把客厅的灯全部关掉", "off", "Light", inc=["客厅"], quant="all")
    q("主卧的灯都打开", "on", "Light", inc=["主卧"], quant="all")
    q("所有筒灯调到20%", "level", "Light", "筒灯", quant="all", act="亮度调到20%")
    q("打开所有吸顶灯", "on", "Light", "吸顶灯", quant="all")
    q("儿童房灯光全部调到最暗", "level", "Light", inc=["儿童房"], quant="all", act="亮度调到最低")
    q("客厅和餐厅的灯都关了", "off", "Light", inc=["客厅", "餐厅"], quant="all")
    q("把餐厅筒灯都关了", "off", "Light", "筒灯", inc=["餐厅"], quant="all")
    q("把所有窗帘都关上", "shade_close", "Blind", quant="all", act="关闭窗帘")
    q("全部窗帘打开", "shade_open", "Blind", quant="all", act="打开窗帘")
    q("主卧的帘子全部拉开", "shade_open", "Blind", inc=["主卧"], quant="all", act="打开窗帘")
    q("所有窗帘开一半", "shade_level", "Blind", quant="all", act="打开一半")
    q("所有空调调到制冷", "ac_mode", "AirConditioner", quant="all", act="调到制冷模式")
    q("把空调全部关了", "off", "AirConditioner", quant="all")
    q("所有空调温度都调到26度", "temp", "AirConditioner", quant="all", act="温度调到26度")
    q("打开所有空调的扫风", "swing", "AirConditioner", quant="all", act="开启扫风")
    q("所有风扇都关掉", "off", "Fan", quant="all")
    q("关掉所有电视", "off", "Television", quant="all")
    q("两个电视都静音", "mute", "Television", quant="all")
    q("所有音箱都暂停", "pause", "NetworkAudio", quant="all", act="暂停播放")
    q("把所有插座都关掉", "off", "SmartPlug", quant="all")
    q("所有排气扇都关了", "off", "Switch", "排气扇", quant="all")
    # bulk: except
    q("除了主卧，其他灯都关掉", "off", "Light", exc=["主卧"], quant="except")
    q("除了儿童房和主卧，其他房间的灯全关", "off", "Light", exc=["儿童房", "主卧"], quant="except")
    q("除了客厅以外，所有灯调到30%", "level", "Light", exc=["客厅"], quant="except", act="亮度调到30%")
    q("除了书房，别的灯都打开", "on", "Light", exc=["书房"], quant="except")
    q("书房之外的灯全部熄灭", "off", "Light", exc=["书房"], quant="except")
    q("除了儿童房，其他窗帘都打开", "shade_open", "Blind", exc=["儿童房"], quant="except", act="打开窗帘")
    q("除了儿童房以外的空调都关了", "off", "AirConditioner", exc=["儿童房"], quant="except")
    q("除了主卧和次卧，其他空调都打开", "on", "AirConditioner", exc=["主卧", "次卧"], quant="except")
    q("把空调都调到26度，书房的除外", "temp", "AirConditioner", exc=["书房"], quant="except", act="温度调到26度")
    q("除了书房，其他音箱都停止播放", "stop", "NetworkAudio", exc=["书房"], quant="except")
    q("除了客厅，所有电视都关掉", "off", "Television", exc=["客厅"], quant="except")
    q("除了客厅和主卧，其他窗帘都关上", "shade_close", "Blind", exc=["客厅", "主卧"], quant="except", act="关闭窗帘")
    q("除了玄关以外，所有灯都调暗一点", "dim", "Light", exc=["玄关"], quant="except", act="调暗一点")
    # any
    q("随便找个音箱放点音乐", "play", "NetworkAudio", quant="any", act="播放音乐")
    q("随便开一盏客厅的灯", "on", "Light", inc=["客厅"], quant="any")
    q("开个灯就行，哪盏都可以", "on", "Light", quant="any")


# =================================================================================================
# home_large: a three-storey villa with twenty rooms
# =================================================================================================
def home_large() -> Home:
    inv = [
        ("玄关", "light_dim", "玄关筒灯1"), ("玄关", "light_dim", "玄关筒灯2"),
        ("玄关", "light_rgb", "玄关灯带"),
        ("玄关", "light_onoff", "鞋柜灯"), ("玄关", "lock", "前门门锁"), ("玄关", "contact", "入户门磁"),
        ("玄关", "motion", "玄关人体感应"),
        ("一楼客厅", "hub", "SmartThings Hub"), ("一楼客厅", "light_ceiling", "吸顶灯"),
        *[("一楼客厅", "light_dim", f"筒灯{i}") for i in range(1, 6)],
        ("一楼客厅", "light_ceiling", "射灯1"), ("一楼客厅", "light_ceiling", "射灯2"),
        ("一楼客厅", "light_rgb", "灯带"), ("一楼客厅", "light_rgb", "落地灯"),
        ("一楼客厅", "shade_tilt", "客厅百叶帘"), ("一楼客厅", "shade_level", "客厅布帘"),
        ("一楼客厅", "shade_level", "客厅纱帘"), ("一楼客厅", "tv_samsung", "客厅电视"),
        ("一楼客厅", "speaker_sonos", "回音壁"), ("一楼客厅", "ac_samsung", "客厅空调"),
        ("一楼客厅", "ac_samsung", "客厅柜机"), ("一楼客厅", "purifier", "大白"),
        ("一楼客厅", "humidifier", "客厅加湿器"), ("一楼客厅", "fan_speed", "小米风扇"),
        ("一楼客厅", "aroma", "香薰机"), ("一楼客厅", "temphum", "客厅温湿度"), ("一楼客厅", "robot", "小白"),
        ("一楼餐厅", "light_ceiling", "餐厅吊灯"), *[("一楼餐厅", "light_dim", f"餐厅筒灯{i}") for i in range(1, 7)],
        ("一楼餐厅", "ac_heat", "餐厅空调"), ("一楼餐厅", "shade_c2c", "餐厅窗帘"),
        ("一楼餐厅", "speaker_small", "餐厅音箱"),
        ("厨房", "light_onoff", "吸顶灯"), *[("厨房", "light_dim", f"厨房筒灯{i}") for i in range(1, 4)],
        ("厨房", "light_dim", "橱柜灯1"), ("厨房", "light_dim", "橱柜灯2"), ("厨房", "fridge", "冰箱"),
        ("厨房", "plug_meter", "电饭煲插座"), ("厨房", "plug_meter", "热水壶插座"),
        ("厨房", "plug_meter", "酒柜插座"),
        ("厨房", "plug_meter", "洗碗机插座"),
        ("厨房", "speaker_small", "厨房音箱"), ("厨房", "switch_wall", "厨房排气扇"),
        ("厨房", "motion", "厨房人体感应"),
        ("一楼卫生间", "light_onoff", "镜前灯"), ("一楼卫生间", "light_onoff", "吸顶灯"),
        ("一楼卫生间", "switch_wall", "排气扇"), ("一楼卫生间", "motion", "卫生间人体感应"),
        ("老人房", "light_ceiling", "吸顶灯"), ("老人房", "light_dim", "老人房筒灯1"),
        ("老人房", "light_dim", "老人房筒灯2"), ("老人房", "light_step", "床头灯"),
        ("老人房", "light_rgb", "起夜灯"),
        ("老人房", "ac_heat", "老人房空调"), ("老人房", "shade_level", "老人房窗帘"),
        ("老人房", "thermo", "老人房地暖"),
        ("老人房", "tv_samsung", "老人房电视"), ("老人房", "temphum", "老人房温湿度"),
        ("老人房", "motion", "老人房人体感应"),
        ("茶室", "light_ceiling", "茶室吊灯"), ("茶室", "light_dim", "茶室筒灯1"),
        ("茶室", "light_dim", "茶室筒灯2"),
        ("茶室", "light_ceiling", "茶台射灯"), ("茶室", "shade_tilt", "茶室百叶帘"),
        ("茶室", "plug_meter", "烧水壶插座"), ("茶室", "speaker_small", "茶室音箱"),
        ("茶室", "temphum", "茶室温湿度"),
        ("车库", "light_onoff", "车库灯1"), ("车库", "light_onoff", "车库灯2"),
        ("车库", "light_onoff", "车库灯3"),
        ("车库", "garage", "车库门"), ("车库", "evse", "充电桩"), ("车库", "plug_meter", "车库插座"),
        ("车库", "contact", "车库侧门门磁"), ("车库", "motion", "车库人体感应"),
        *[("花园", "light_onoff", f"庭院灯{i}") for i in range(1, 9)], ("花园", "light_onoff", "草坪灯"),
        ("花园", "light_rgb", "花园氛围灯"), ("花园", "switch_wall", "喷泉水泵"),
        ("花园", "speaker_small", "花园音箱"),
        ("花园", "plug_meter", "户外插座"), ("花园", "lock", "花园门锁"),
        *[("楼梯间", "light_dim", f"楼梯灯{i}") for i in range(1, 7)], ("楼梯间", "motion", "楼梯人体感应"),
        ("二楼主卧", "light_ceiling", "吸顶灯"), *[("二楼主卧", "light_dim", f"筒灯{i}") for i in range(1, 7)],
        ("二楼主卧", "light_step", "床头灯左"), ("二楼主卧", "light_step", "床头灯右"),
        ("二楼主卧", "light_rgb", "床底灯带"), ("二楼主卧", "shade_level", "主卧布帘"),
        ("二楼主卧", "shade_level", "主卧纱帘"), ("二楼主卧", "ac_samsung", "主卧空调"),
        ("二楼主卧", "thermo", "主卧地暖"), ("二楼主卧", "tv_samsung", "主卧电视"),
        ("二楼主卧", "humidifier", "主卧加湿器"), ("二楼主卧", "purifier", "主卧净化器"),
        ("二楼主卧", "speaker_sonos", "Bob"), ("二楼主卧", "aroma", "主卧香薰机"),
        ("二楼主卧", "temphum", "主卧温湿度"),
        ("主卫", "light_dim", "镜前灯"), ("主卫", "light_onoff", "主卫吸顶灯"),
        ("主卫", "switch_wall", "浴霸"),
        ("主卫", "switch_wall", "排气扇"), ("主卫", "switch_wall", "热水器"),
        ("衣帽间", "light_dim", "衣柜灯1"), ("衣帽间", "light_dim", "衣柜灯2"),
        ("衣帽间", "light_onoff", "衣帽间主灯"),
        ("衣帽间", "motion", "衣帽间人体感应"),
        ("二楼次卧", "light_ceiling", "吸顶灯"), ("二楼次卧", "light_dim", "次卧筒灯1"),
        ("二楼次卧", "light_dim", "次卧筒灯2"), ("二楼次卧", "light_ceiling", "床头灯"),
        ("二楼次卧", "light_dim", "台灯"),
        ("二楼次卧", "ac_heat", "次卧空调"), ("二楼次卧", "shade_c2c", "次卧窗帘"),
        ("二楼次卧", "fan_speed", "落地扇"),
        ("二楼次卧", "tv_samsung", "次卧电视"), ("二楼次卧", "humidifier", "次卧加湿器"),
        ("儿童房", "light_ceiling", "吸顶灯"), ("儿童房", "light_rgb", "星空灯"),
        ("儿童房", "light_rgb", "卧室小夜灯"),
        ("儿童房", "light_step", "护眼台灯"), ("儿童房", "ac_heat", "儿童房空调"),
        ("儿童房", "shade_level", "儿童房窗帘"),
        ("儿童房", "humidifier", "儿童房加湿器"), ("儿童房", "purifier", "小净"),
        ("儿童房", "speaker_small", "故事机"),
        ("儿童房", "temphum", "儿童房温湿度"),
        ("书房", "light_ceiling", "客厅老伙计"), ("书房", "light_ceiling", "吸顶灯"),
        *[("书房", "light_dim", f"书房筒灯{i}") for i in range(1, 5)],
        ("书房", "light_step", "书桌台灯"), ("书房", "light_rgb", "书架灯带"),
        ("书房", "ac_heat", "书房空调"),
        ("书房", "shade_tilt", "书房百叶窗"), ("书房", "plug_meter", "显示器插座"),
        ("书房", "speaker_small", "书房音箱"),
        ("书房", "fan_speed", "桌面风扇"),
        ("二楼卫生间", "light_onoff", "镜前灯"), ("二楼卫生间", "light_onoff", "吸顶灯"),
        ("二楼卫生间", "switch_wall", "排气扇"), ("二楼卫生间", "switch_wall", "热水器"),
        ("影音室", "light_rgb", "星空顶"), ("影音室", "light_rgb", "氛围灯带"),
        *[("影音室", "light_dim", f"筒灯{i}") for i in range(1, 7)], ("影音室", "tv_samsung", "投影仪"),
        ("影音室", "speaker_sonos", "家庭影院"), ("影音室", "shade_level", "遮光帘"),
        ("影音室", "ac_samsung", "影音室空调"), ("影音室", "motion", "影音室人体感应"),
        ("健身房", "light_onoff", "健身房灯1"), ("健身房", "light_onoff", "健身房灯2"),
        ("健身房", "fan_speed", "壁扇"),
        ("健身房", "ac_heat", "健身房空调"), ("健身房", "speaker_small", "健身房音箱"),
        ("健身房", "tv_samsung", "健身房电视"), ("健身房", "plug_meter", "跑步机插座"),
        ("健身房", "shade_level", "健身房窗帘"),
        ("阳台", "light_onoff", "阳台灯"), ("阳台", "washer", "洗衣机"), ("阳台", "dryer", "烘干机"),
        ("阳台", "shade_c2c", "阳台窗帘"), ("阳台", "plug_meter", "阳台插座"),
        ("阳台", "temphum", "阳台温湿度"),
    ]
    rooms = ["玄关", "一楼客厅", "一楼餐厅", "厨房", "一楼卫生间", "老人房", "茶室", "车库", "花园", "楼梯间",
             "二楼主卧", "主卫", "衣帽间", "二楼次卧", "儿童房", "书房", "二楼卫生间", "影音室", "健身房", "阳台"]
    english = {"light_rgb", "speaker_sonos", "shade_c2c", "evse", "robot", "garage", "ac_heat"}
    return Home("home_large", "zh", rooms, inv, english)


LARGE_ALIASES = {"一楼客厅": ["客厅", "一楼客厅"], "一楼餐厅": ["餐厅", "一楼餐厅"], "二楼主卧": ["主卧", "二楼主卧"],
                 "二楼次卧": ["次卧", "二楼次卧"], "一楼卫生间": ["一楼卫生间", "楼下卫生间"],
                 "二楼卫生间": ["二楼卫生间", "楼上卫生间"]}
BATHS = ["一楼卫生间", "主卫", "二楼卫生间"]


def queries_large(b: Book):
    q = b.q
    h = b.home
    light_rooms = [r for r in h.rooms if any(d.room == r and d.category == "Light" for d in h.devices)]
    room_light_loop(b, [r for r in light_rooms if r not in ("一楼客厅", "书房", "车库", "健身房", "阳台", "花园")],
                    ["玄关", "一楼餐厅", "厨房", "老人房", "茶室", "二楼主卧", "衣帽间", "二楼次卧", "二楼卫生间"],
                    LARGE_ALIASES)
    room_level_loop(b, ["玄关", "茶室", "老人房", "二楼次卧", "影音室", "主卫"], LARGE_ALIASES)
    room_dim_loop(b, ["一楼餐厅", "书房", "二楼主卧", "儿童房"], LARGE_ALIASES)
    # the design note's failure cases: shades (one with tilt) share the room with the lights
    q("打开客厅的灯", "on", "Light", inc=["一楼客厅"])
    q("把客厅灯光调到50%", "level", "Light", inc=["一楼客厅"], act="亮度调到50%")
    q("书房的灯光调到50%", "level", "Light", inc=["书房"], act="亮度调到50%")
    q("茶室开一下灯", "on", "Light", inc=["茶室"])
    # lights: custom names, room words in other rooms, duplicates
    q("打开客厅老伙计", "on", "Unknown", "客厅老伙计")
    q("老伙计亮度调到40%", "level", "Unknown", "老伙计", act="亮度调到40%")
    q("把老伙计关了", "off", "Unknown", "老伙计")
    q("老伙计换成暖光", "ct", "Unknown", "老伙计", act="调成暖光")
    q("关掉书房的灯", "off", "Light", inc=["书房"])
    q("打开卧室小夜灯", "on", "Light", "卧室小夜灯")
    q("卧室小夜灯调到10%", "level", "Light", "卧室小夜灯", act="亮度调到10%")
    q("儿童房的小夜灯换成粉色", "color", "Light", "小夜灯", inc=["儿童房"], act="调成粉色")
    q("打开星空灯", "on", "Light", "星空灯")
    q("影音室星空顶打开", "on", "Light", "星空顶", inc=["影音室"])
    q("把星空顶换成蓝色", "color", "Light", "星空顶", act="调成蓝色")
    q("起夜灯开一下", "on", "Light", "起夜灯")
    q("起夜灯调到最暗", "level", "Light", "起夜灯", act="亮度调到最低")
    q("关掉主卧的床头灯左", "off", "Light", "床头灯左", inc=["二楼主卧"])
    q("老人房床头灯亮一点", "dim", "Light", "床头灯", inc=["老人房"], act="调亮一点")
    q("次卧床头灯色温调到3000K", "ct", "Light", "床头灯", inc=["二楼次卧"], act="调节色温")
    q("打开护眼台灯", "on", "Light", "护眼台灯")
    q("护眼台灯调成冷白光", "ct", "Light", "护眼台灯", act="调成冷白光")
    q("书桌台灯暗一点", "dim", "Light", "书桌台灯", act="调暗一点")
    q("二楼次卧的台灯开一下", "on", "Light", "台灯", inc=["二楼次卧"])
    q("客厅射灯打开", "on", "Light", "射灯", inc=["一楼客厅"])
    q("射灯2关一下", "off", "Light", "射灯2")
    q("茶台射灯亮度60%", "level", "Light", "茶台射灯", act="亮度调到60%")
    q("客厅灯带换成绿色", "color", "Light", "灯带", inc=["一楼客厅"], act="调成绿色")
    q("床底灯带打开", "on", "Light", "床底灯带")
    q("书架灯带关了", "off", "Light", "书架灯带")
    q("玄关灯带调成暖白", "ct", "Light", "玄关灯带", act="调成暖白光")
    q("打开落地灯", "on", "Light", "落地灯")
    q("鞋柜灯开一下", "on", "Light", "鞋柜灯")
    q("餐厅吊灯打开", "on", "Light", "吊灯", inc=["一楼餐厅"])
    q("茶室吊灯调暗", "dim", "Light", "吊灯", inc=["茶室"], act="调暗一点")
    q("厨房橱柜灯打开", "on", "Light", "橱柜灯", inc=["厨房"])
    q("厨房筒灯调到70%", "level", "Light", "筒灯", inc=["厨房"], act="亮度调到70%")
    q("主卫镜前灯调亮", "dim", "Light", "镜前灯", inc=["主卫"], act="调亮一点")
    q("二楼卫生间镜前灯关掉", "off", "Light", "镜前灯", inc=["二楼卫生间"])
    q("楼梯灯调到30%", "level", "Light", "楼梯灯", act="亮度调到30%")
    q("衣柜灯打开", "on", "Light", "衣柜灯")
    q("衣帽间主灯关一下", "off", "Light", "衣帽间主灯")
    q("草坪灯关了", "off", "Light", "草坪灯")
    q("花园氛围灯换成紫色", "color", "Light", "花园氛围灯", act="调成紫色")
    q("车库开灯", "on", "Light", inc=["车库"])
    q("健身房灯开一下", "on", "Light", inc=["健身房"])
    q("阳台灯关了", "off", "Light", inc=["阳台"])
    q("影音室筒灯调到20%", "level", "Light", "筒灯", inc=["影音室"], act="亮度调到20%")
    q("影音室氛围灯带调成红色", "color", "Light", "氛围灯带", inc=["影音室"], act="调成红色")
    q("主卧吸顶灯开一下", "on", "Light", "吸顶灯", inc=["二楼主卧"])
    q("厨房吸顶灯关掉", "off", "Light", "吸顶灯", inc=["厨房"])
    q("儿童房吸顶灯调到60%", "level", "Light", "吸顶灯", inc=["儿童房"], act="亮度调到60%")
    q("主卧的灯调成暖光", "ct", "Light", inc=["二楼主卧"], act="调成暖光")
    q("客厅灯光暖一点", "ct_step", "Light", inc=["一楼客厅"], act="调暖一点")
    q("老人房灯光调暗一些", "dim", "Light", inc=["老人房"], act="调暗一点")
    q("把书房的灯亮度调到百分之七十", "level", "Light", inc=["书房"], act="亮度调到70%")
    q("庭院灯3关一下", "off", "Light", "庭院灯3")
    # blinds
    q("打开客厅的窗帘", "shade_open", "Blind", inc=["一楼客厅"], act="打开窗帘")
    q("客厅布帘拉上", "shade_close", "Blind", "布帘", inc=["一楼客厅"], act="关闭窗帘")
    q("客厅纱帘开一半", "shade_level", "Blind", "纱帘", inc=["一楼客厅"], act="打开一半")
    q("客厅百叶帘角度调到30%", "tilt", "Blind", "百叶帘", inc=["一楼客厅"], act="调节百叶角度")
    q("把客厅百叶帘的叶片调平", "tilt", "Blind", "百叶帘", inc=["一楼客厅"], act="调节百叶角度")
    q("餐厅窗帘打开", "shade_open", "Blind", "窗帘", inc=["一楼餐厅"], act="打开窗帘")
    q("餐厅窗帘开到70%", "shade_level", "Blind", "窗帘", inc=["一楼餐厅"], act="打开到70%")
    q("老人房窗帘关上", "shade_close", "Blind", "窗帘", inc=["老人房"], act="关闭窗帘")
    q("茶室百叶帘打开", "shade_open", "Blind", "百叶帘", inc=["茶室"], act="打开百叶帘")
    q("茶室百叶帘角度调到一半", "tilt", "Blind", "百叶帘", inc=["茶室"], act="调节百叶角度")
    q("主卧纱帘拉开", "shade_open", "Blind", "纱帘", inc=["二楼主卧"], act="打开纱帘")
    q("主卧布帘关一半", "shade_level", "Blind", "布帘", inc=["二楼主卧"], act="关到一半")
    q("次卧窗帘停一下", "shade_pause", "Blind", "窗帘", inc=["二楼次卧"], act="暂停")
    q("儿童房窗帘拉上", "shade_close", "Blind", "窗帘", inc=["儿童房"], act="关闭窗帘")
    q("书房百叶窗打开", "shade_open", "Blind", "百叶窗", inc=["书房"], act="打开百叶窗")
    q("书房百叶窗叶片角度调到80%", "tilt", "Blind", "百叶窗", inc=["书房"], act="调节百叶角度")
    q("影音室遮光帘关上", "shade_close", "Blind", "遮光帘", inc=["影音室"], act="关闭遮光帘")
    q("健身房窗帘开到40%", "shade_level", "Blind", "窗帘", inc=["健身房"], act="打开到40%")
    q("阳台窗帘打开", "shade_open", "Blind", "窗帘", inc=["阳台"], act="打开窗帘")
    # air conditioners
    q("打开客厅空调", "on", "AirConditioner", inc=["一楼客厅"])
    q("客厅柜机调到制冷", "ac_mode", "AirConditioner", "柜机", inc=["一楼客厅"], act="调到制冷模式")
    q("客厅空调温度调到25度", "temp", "AirConditioner", inc=["一楼客厅"], act="温度调到25度")
    q("客厅柜机开启速冷", "ac_opt", "AirConditioner", "柜机", inc=["一楼客厅"], act="开启速冷")
    q("餐厅空调开制热", "ac_mode", "AirConditioner", inc=["一楼餐厅"], act="调到制热模式")
    q("餐厅空调温度调到22度", "temp", "AirConditioner", inc=["一楼餐厅"], act="温度调到22度")
    q("老人房空调制热温度调到26度", "heat_sp", "AirConditioner", inc=["老人房"], act="制热温度调到26度")
    q("老人房空调风速调低", "ac_fan", "AirConditioner", inc=["老人房"], act="调低风速")
    q("主卧空调开睡眠模式", "ac_opt", "AirConditioner", inc=["二楼主卧"], act="开启睡眠模式")
    q("主卧空调关掉", "off", "AirConditioner", inc=["二楼主卧"])
    q("主卧空调调到除湿", "ac_mode", "AirConditioner", inc=["二楼主卧"], act="调到除湿模式")
    q("次卧空调开一下", "on", "AirConditioner", inc=["二楼次卧"])
    q("次卧空调上下扫风", "swing", "AirConditioner", inc=["二楼次卧"], act="开启上下扫风")
    q("儿童房空调调到26度", "temp", "AirConditioner", inc=["儿童房"], act="温度调到26度")
    q("儿童房空调切换成自动模式", "ac_mode", "AirConditioner", inc=["儿童房"], act="调到自动模式")
    q("书房空调送风", "ac_mode", "AirConditioner", inc=["书房"], act="调到送风模式")
    q("书房空调关了", "off", "AirConditioner", inc=["书房"])
    q("影音室空调温度设为23度", "temp", "AirConditioner", inc=["影音室"], act="温度调到23度")
    q("影音室空调开无风感", "ac_opt", "AirConditioner", inc=["影音室"], act="开启无风感模式")
    q("健身房空调打开", "on", "AirConditioner", inc=["健身房"])
    q("健身房空调风速调到最大", "ac_fan", "AirConditioner", inc=["健身房"], act="风速调到最大")
    # floor heating
    q("打开老人房地暖", "thermo_heat", "Thermostat", inc=["老人房"], act="打开地暖")
    q("老人房地暖调到22度", "heat_sp", "Thermostat", inc=["老人房"], act="温度调到22度")
    q("主卧地暖关掉", "thermo_off", "Thermostat", inc=["二楼主卧"], act="关闭地暖")
    q("主卧地暖切到节能模式", "thermo_mode", "Thermostat", inc=["二楼主卧"], act="调到节能模式")
    # fans
    q("打开小米风扇", "on", "Fan", "小米风扇")
    q("落地扇调到3档", "fan_speed", "Fan", "落地扇", act="风速调到3档")
    q("桌面风扇开摇头", "swing", "Fan", "桌面风扇", act="开启摇头")
    q("健身房壁扇风速开到最大", "fan_speed", "Fan", "壁扇", inc=["健身房"], act="风速调到最大")
    # TVs
    q("打开客厅电视", "on", "Television", inc=["一楼客厅"])
    q("客厅电视声音调到25", "vol", "Television", inc=["一楼客厅"], act="音量调到25")
    q("客厅电视大声点", "vol_up", "Television", inc=["一楼客厅"])
    q("客厅电视静音", "mute", "Television", inc=["一楼客厅"])
    q("老人房电视音量调大一些", "vol_up", "Television", inc=["老人房"])
    q("老人房电视换到1频道", "channel", "Television", inc=["老人房"], act="切换到1频道")
    q("主卧电视下一个频道", "ch_up", "Television", inc=["二楼主卧"])
    q("主卧电视关掉", "off", "Television", inc=["二楼主卧"])
    q("次卧电视切到HDMI1", "input", "Television", inc=["二楼次卧"], act="切换信号源")
    q("投影仪打开", "on", "Television", "投影仪")
    q("投影仪切换到HDMI2", "input", "Television", "投影仪", act="切换信号源")
    q("健身房电视取消静音", "unmute", "Television", inc=["健身房"])
    q("客厅电视暂停播放", "pause", "Television", inc=["一楼客厅"])
    q("影音室的投影仪音量调低", "vol_down", "Television", "投影仪", inc=["影音室"])
    q("次卧电视换个台", "ch_change", "Television", inc=["二楼次卧"])
    # speakers
    q("回音壁音量调到30", "vol", "NetworkAudio", "回音壁", act="音量调到30")
    q("Bob播放音乐", "play", "Unknown", "Bob", act="播放音乐")
    q("把Bob暂停", "pause", "Unknown", "Bob", act="暂停播放")
    q("Bob声音小一点", "vol_down", "Unknown", "Bob")
    q("Bob静音", "mute", "Unknown", "Bob")
    q("Bob播放我的收藏", "preset", "Unknown", "Bob", act="播放收藏")
    q("故事机放个故事", "play", "Unknown", "故事机", act="播放故事")
    q("故事机暂停", "pause", "Unknown", "故事机", act="暂停播放")
    q("厨房音箱下一首", "next", "NetworkAudio", inc=["厨房"])
    q("茶室音箱上一首", "prev", "NetworkAudio", inc=["茶室"])
    q("花园音箱停止播放", "stop", "NetworkAudio", inc=["花园"])
    q("书房音箱单曲循环", "repeat", "NetworkAudio", inc=["书房"], act="设置单曲循环")
    q("健身房音箱音量调到80", "vol", "NetworkAudio", inc=["健身房"], act="音量调到80")
    q("家庭影院声音大一点", "vol_up", "NetworkAudio", "家庭影院")
    q("餐厅音箱随机播放", "shuffle", "NetworkAudio", inc=["一楼餐厅"])
    # appliances
    q("洗衣机开始洗衣服", "washer_state", "Washer", act="开始洗衣")
    q("洗衣机暂停一下", "washer_state", "Washer", act="暂停洗衣")
    q("洗衣机换成漂洗", "washer_mode", "Washer", act="切换到漂洗模式")
    q("把洗衣机关了", "off", "Washer")
    q("烘干机开始烘干", "dryer_state", "Dryer", act="开始烘干")
    q("烘干机改成高温烘干", "dryer_mode", "Dryer", act="切换到高温烘干")
    q("烘干机停止", "dryer_state", "Dryer", act="停止烘干")
    q("小白开始打扫", "robot_start", "Unknown", "小白", act="开始清扫")
    q("小白回充", "robot_move", "Unknown", "小白", act="返回充电")
    q("扫地机器人暂停", "robot_move", "RobotCleaner", act="暂停清扫")
    q("小白用局部清扫", "robot_mode", "Unknown", "小白", act="局部清扫")
    q("扫地机开静音模式", "robot_turbo", "RobotCleaner", act="开启静音模式")
    q("锁上前门", "lock", "Lock", "前门")
    q("打开前门门锁", "unlock", "Lock", "前门门锁", act="开锁")
    q("花园门锁锁上", "lock", "Lock", "花园门锁")
    q("花园的门开一下锁", "unlock", "Lock", inc=["花园"])
    q("打开车库门", "garage_open", "GarageDoor", act="打开车库门")
    q("车库门关上", "garage_close", "GarageDoor", act="关闭车库门")
    q("开始给车充电", "charge_on", "Charger")
    q("充电桩停止充电", "charge_off", "Charger")
    q("充电电流设为16安", "charge_current", "Charger", act="设置充电电流")
    q("打开大白", "on", "Unknown", "大白")
    q("大白调到自动模式", "purifier_mode", "Unknown", "大白", act="调到自动模式")
    q("主卧净化器开睡眠模式", "purifier_mode", "AirPurifier", inc=["二楼主卧"], act="调到睡眠模式")
    q("关掉小净", "off", "Unknown", "小净")
    q("打开儿童房加湿器", "on", "Humidifier", inc=["儿童房"])
    q("主卧加湿器调到高档", "humid_mode", "Humidifier", inc=["二楼主卧"], act="调到高档")
    q("客厅加湿器关掉", "off", "Humidifier", inc=["一楼客厅"])
    q("打开客厅的香薰机", "on", "Unknown", "香薰机", inc=["一楼客厅"])
    q("主卧香薰机关了", "off", "Unknown", "香薰机", inc=["二楼主卧"])
    q("主卧香薰机浓度调到30%", "level", "Unknown", "香薰机", inc=["二楼主卧"], act="浓度调到30%")
    q("冰箱冷藏调到3度", "cool_sp", "Refrigerator", act="冷藏温度调到3度")
    q("关掉电饭煲插座", "off", "SmartPlug", "电饭煲插座")
    q("热水壶插座打开", "on", "SmartPlug", "热水壶插座")
    q("酒柜插座断电", "off", "SmartPlug", "酒柜插座", act="断电")
    q("茶室烧水壶插座通电", "on", "SmartPlug", "烧水壶插座", inc=["茶室"], act="通电")
    q("户外插座关了", "off", "SmartPlug", "户外插座")
    q("跑步机插座开一下", "on", "SmartPlug", "跑步机插座")
    q("显示器插座电量统计清零", "reset_energy", "SmartPlug", "显示器插座")
    q("打开浴霸", "on", "Switch", "浴霸")
    q("关掉主卫排气扇", "off", "Switch", "排气扇", inc=["主卫"])
    q("厨房排气扇开一下", "on", "Switch", "排气扇", inc=["厨房"])
    q("打开喷泉", "on", "Switch", "喷泉")
    q("二楼卫生间热水器关了", "off", "Switch", "热水器", inc=["二楼卫生间"])
    # bulk: all
    q("关掉所有的灯", "off", "Light", quant="all")
    q("把家里所有灯都打开", "on", "Light", quant="all")
    q("全屋灯光调到30%", "level", "Light", quant="all", act="亮度调到30%")
    q("把所有的灯调暗一点", "dim", "Light", quant="all", act="调暗一点")
    q("所有灯调成暖光", "ct", "Light", quant="all", act="调成暖光")
    q("把客厅的灯全部关掉", "off", "Light", inc=["一楼客厅"], quant="all")
    q("二楼主卧的灯全部打开", "on", "Light", inc=["二楼主卧"], quant="all")
    q("影音室所有灯都关了", "off", "Light", inc=["影音室"], quant="all")
    q("花园的灯全开", "on", "Light", inc=["花园"], quant="all")
    q("把所有的筒灯都关掉", "off", "Light", "筒灯", quant="all")
    q("把客厅所有筒灯调到40%", "level", "Light", "筒灯", inc=["一楼客厅"], quant="all", act="亮度调到40%")
    q("所有卫生间的灯都关掉", "off", "Light", inc=BATHS, quant="all")
    q("把所有灯带都打开", "on", "Light", "灯带", quant="all")
    q("所有灯带换成蓝色", "color", "Light", "灯带", quant="all", act="调成蓝色")
    q("把所有射灯色温调到4000K", "ct", "Light", "射灯", quant="all", act="调节色温")
    q("儿童房的灯全部关掉", "off", "Light", inc=["儿童房"], quant="all")
    q("所有吸顶灯都打开", "on", "Light", "吸顶灯", quant="all")
    q("庭院灯都打开", "on", "Light", "庭院灯", quant="all")
    q("楼梯灯全部打开", "on", "Light", "楼梯灯", quant="all")
    q("台灯都关了", "off", "Light", "台灯", quant="all")
    q("主卧两个床头灯都调暗一点", "dim", "Light", "床头灯", inc=["二楼主卧"], quant="all", act="调暗一点")
    q("把全部窗帘都关上", "shade_close", "Blind", quant="all", act="关闭窗帘")
    q("所有窗帘都打开", "shade_open", "Blind", quant="all", act="打开窗帘")
    q("所有窗帘开到一半", "shade_level", "Blind", quant="all", act="打开一半")
    q("所有窗帘都停下", "shade_pause", "Blind", quant="all", act="暂停")
    q("把主卧的窗帘都拉上", "shade_close", "Blind", inc=["二楼主卧"], quant="all", act="关闭窗帘")
    q("所有百叶的角度调到50%", "tilt", "Blind", "百叶", quant="all", act="调节百叶角度")
    q("所有空调调到制冷", "ac_mode", "AirConditioner", quant="all", act="调到制冷模式")
    q("把所有空调都关了", "off", "AirConditioner", quant="all")
    q("全部空调温度设为26度", "temp", "AirConditioner", quant="all", act="温度调到26度")
    q("所有空调风速调到自动", "ac_fan", "AirConditioner", quant="all", act="风速调到自动")
    q("所有空调都开启上下扫风", "swing", "AirConditioner", quant="all", act="开启上下扫风")
    q("主卧和次卧的空调都打开", "on", "AirConditioner", inc=["二楼主卧", "二楼次卧"], quant="all")
    q("所有地暖都打开", "thermo_heat", "Thermostat", quant="all", act="打开地暖")
    q("地暖全部调到20度", "heat_sp", "Thermostat", quant="all", act="温度调到20度")
    q("把所有风扇都关了", "off", "Fan", quant="all")
    q("关掉所有电视", "off", "Television", quant="all")
    q("所有电视都静音", "mute", "Television", quant="all")
    q("所有音箱暂停播放", "pause", "NetworkAudio", quant="all")
    q("所有音箱音量调到20", "vol", "NetworkAudio", quant="all", act="音量调到20")
    q("所有音箱都停止播放", "stop", "NetworkAudio", quant="all")
    q("把所有门锁都锁上", "lock", "Lock", quant="all")
    q("所有净化器调到睡眠模式", "purifier_mode", "AirPurifier", quant="all", act="调到睡眠模式")
    q("所有加湿器都关了", "off", "Humidifier", quant="all")
    q("把所有插座都关了", "off", "SmartPlug", quant="all")
    q("所有排气扇都打开", "on", "Switch", "排气扇", quant="all")
    q("热水器都打开", "on", "Switch", "热水器", quant="all")
    # bulk: except
    q("除了儿童房以外的空调都关了", "off", "AirConditioner", exc=["儿童房"], quant="except")
    q("除了主卧，其他房间的灯都关掉", "off", "Light", exc=["二楼主卧"], quant="except")
    q("除了客厅和餐厅，其他灯全部关闭", "off", "Light", exc=["一楼客厅", "一楼餐厅"], quant="except")
    q("除了老人房，别的窗帘都打开", "shade_open", "Blind", exc=["老人房"], quant="except", act="打开窗帘")
    q("除了书房，其他空调都调到制冷", "ac_mode", "AirConditioner", exc=["书房"], quant="except", act="调到制冷模式")
    q("除了车库和花园，把所有灯都打开", "on", "Light", exc=["车库", "花园"], quant="except")
    q("除了影音室，其他音箱都暂停", "pause", "NetworkAudio", exc=["影音室"], quant="except", act="暂停播放")
    q("除了主卧，其他电视都关掉", "off", "Television", exc=["二楼主卧"], quant="except")
    q("除了厨房以外的插座都断电", "off", "SmartPlug", exc=["厨房"], quant="except", act="断电")
    q("除了儿童房和老人房，所有灯调到80%", "level", "Light", exc=["儿童房", "老人房"], quant="except",
      act="亮度调到80%")
    q("除了卫生间，其他灯都关了", "off", "Light", exc=BATHS, quant="except")
    q("书房之外的灯全部熄灭", "off", "Light", exc=["书房"], quant="except")
    q("除了一楼客厅，其他地方的窗帘都关上", "shade_close", "Blind", exc=["一楼客厅"], quant="except", act="关闭窗帘")
    q("除了次卧，所有窗帘开一半", "shade_level", "Blind", exc=["二楼次卧"], quant="except", act="打开一半")
    q("除了儿童房，其他净化器都关掉", "off", "AirPurifier", exc=["儿童房"], quant="except")
    q("除了健身房以外的风扇都关了", "off", "Fan", exc=["健身房"], quant="except")
    q("除了主卧，其他空调温度都设成26度", "temp", "AirConditioner", exc=["二楼主卧"], quant="except",
      act="温度调到26度")
    q("除了玄关，其他筒灯都关掉", "off", "Light", "筒灯", exc=["玄关"], quant="except")
    q("除了主卧，其他地暖都关了", "thermo_off", "Thermostat", exc=["二楼主卧"], quant="except", act="关闭地暖")
    q("除了影音室和健身房，其他空调都开到自动风", "ac_fan", "AirConditioner", exc=["影音室", "健身房"], quant="except",
      act="风速调到自动")
    # any
    q("随便开一盏客厅的灯", "on", "Light", inc=["一楼客厅"], quant="any")
    q("随便找个音箱放点音乐", "play", "NetworkAudio", quant="any", act="播放音乐")
    q("哪个加湿器都行，开一台", "on", "Humidifier", quant="any")
    q("楼梯随便亮一盏灯就行", "on", "Light", inc=["楼梯间"], quant="any")


# =================================================================================================
# home_en: an American house, English labels and queries (generalisation check)
# =================================================================================================
def home_en() -> Home:
    inv = [
        ("Living Room", "hub", "SmartThings Hub"), ("Living Room", "light_ceiling", "Ceiling Light"),
        ("Living Room", "light_rgb", "Sunny"), ("Living Room", "shade_tilt", "Living Room Blinds"),
        ("Living Room", "tv_samsung", "Living Room TV"), ("Living Room", "speaker_sonos", "Sonos One"),
        ("Living Room", "fan_speed", "Ceiling Fan"), ("Living Room", "robot", "Bob"),
        ("Kitchen", "light_dim", "Pendant 1"), ("Kitchen", "light_dim", "Pendant 2"),
        ("Kitchen", "fridge", "Fridge"),
        ("Kitchen", "plug_meter", "Coffee Maker"),
        ("Dining Room", "light_ct", "Chandelier"),
        ("Master Bedroom", "light_ceiling", "Ceiling Light"),
        ("Master Bedroom", "light_step", "Bedside Lamp"),
        ("Master Bedroom", "shade_level", "Bedroom Shades"), ("Master Bedroom", "ac_basic", "Window AC"),
        ("Master Bedroom", "tv_samsung", "Bedroom TV"), ("Master Bedroom", "purifier", "Air Purifier"),
        ("Master Bedroom", "aroma", "Diffuser"),
        ("Kids Room", "light_dim", "Living Room Lamp"), ("Kids Room", "light_rgb", "Luna"),
        ("Kids Room", "humidifier", "Humidifier"), ("Kids Room", "shade_level", "Kids Room Shades"),
        ("Office", "light_step", "Desk Lamp"), ("Office", "shade_c2c", "Office Blinds"),
        ("Office", "fan_mode", "Desk Fan"), ("Office", "speaker_small", "Office Speaker"),
        ("Garage", "garage", "Garage Door"), ("Garage", "light_onoff", "Garage Light"),
        ("Garage", "evse", "EV Charger"),
        ("Laundry Room", "washer", "Washer"), ("Laundry Room", "dryer", "Dryer"),
        ("Entryway", "lock", "Front Door Lock"), ("Entryway", "light_onoff", "Porch Light"),
        ("Entryway", "thermo_en", "Thermostat"), ("Entryway", "motion", "Hallway Motion"),
    ]
    rooms = ["Living Room", "Kitchen", "Dining Room", "Master Bedroom", "Kids Room", "Office", "Garage",
             "Laundry Room", "Entryway"]
    return Home("home_en", "en", rooms, inv, set(), unit="F")


EN_ALIASES = {"Living Room": ["living room"], "Kitchen": ["kitchen"], "Dining Room": ["dining room"],
              "Master Bedroom": ["master bedroom", "main bedroom"], "Kids Room": ["kids room", "kids' room"],
              "Office": ["office"], "Garage": ["garage"], "Entryway": ["entryway"]}


def queries_en(b: Book):
    q = b.q
    room_light_loop(b, ["Dining Room", "Office", "Master Bedroom"], ["Kids Room", "Office"], EN_ALIASES, lang="en")
    q("turn on the living room lights", "on", "Light", inc=["Living Room"])
    q("set the living room lights to 50%", "level", "Light", inc=["Living Room"], act="亮度调到50%")
    q("living room lights at half brightness", "level", "Light", inc=["Living Room"], act="亮度调到50%")
    q("turn on Sunny", "on", "Unknown", "Sunny")
    q("dim Sunny a bit", "dim", "Unknown", "Sunny", act="调暗一点")
    q("make Sunny blue", "color", "Unknown", "Sunny", act="调成蓝色")
    q("switch off the kitchen lights", "off", "Light", inc=["Kitchen"])
    q("kitchen pendants to 30 percent", "level", "Light", "Pendant", inc=["Kitchen"], act="亮度调到30%")
    q("turn off pendant 2", "off", "Light", "Pendant 2")
    q("turn on the ceiling light in the master bedroom", "on", "Light", "Ceiling Light", inc=["Master Bedroom"])
    q("turn off both ceiling lights", "off", "Light", "Ceiling Light", quant="all")
    q("bedside lamp warmer please", "ct_step", "Light", "Bedside Lamp", act="调暖一点")
    q("set the bedside lamp to 2700K", "ct", "Light", "Bedside Lamp", act="调节色温")
    q("turn the Living Room Lamp off", "off", "Light", "Living Room Lamp")
    q("turn on the kids room lights", "on", "Light", inc=["Kids Room"])
    q("Luna on", "on", "Unknown", "Luna")
    q("turn Luna down to 10%", "level", "Unknown", "Luna", act="亮度调到10%")
    q("desk lamp a little brighter", "dim", "Light", "Desk Lamp", act="调亮一点")
    q("turn on the porch light", "on", "Light", "Porch Light")
    q("make the dining room lights warmer", "ct_step", "Light", inc=["Dining Room"], act="调暖一点")
    q("living room lights a little brighter", "dim", "Light", inc=["Living Room"], act="调亮一点")
    q("set the master bedroom lights to 40%", "level", "Light", inc=["Master Bedroom"], act="亮度调到40%")
    q("chandelier to 80 percent", "level", "Light", "Chandelier", act="亮度调到80%")
    # blinds
    q("open the living room blinds", "shade_open", "Blind", inc=["Living Room"], act="打开窗帘")
    q("close the bedroom shades", "shade_close", "Blind", "Bedroom Shades", act="关闭窗帘")
    q("open the office blinds halfway", "shade_level", "Blind", inc=["Office"], act="打开一半")
    q("tilt the living room blinds to 30%", "tilt", "Blind", inc=["Living Room"], act="调节百叶角度")
    q("stop the kids room shades", "shade_pause", "Blind", inc=["Kids Room"], act="暂停")
    q("office blinds up", "shade_open", "Blind", inc=["Office"], act="打开窗帘")
    # climate
    q("turn on the window AC", "on", "AirConditioner", "Window AC")
    q("set the AC to cool", "ac_mode", "AirConditioner", act="调到制冷模式")
    q("set the AC to 72", "temp", "AirConditioner", act="温度调到72度")
    q("AC fan on high", "ac_fan", "AirConditioner", act="风速调到高风")
    q("switch the air conditioner to dry mode", "ac_mode", "AirConditioner", act="调到除湿模式")
    q("set the thermostat to heat", "thermo_heat", "Thermostat", act="调到制热模式")
    q("thermostat to 68 degrees", "temp", "Thermostat", act="温度调到68度")
    q("turn the thermostat off", "thermo_off", "Thermostat")
    q("put the thermostat on auto", "thermo_auto", "Thermostat")
    q("set the thermostat fan to circulate", "thermo_fan", "Thermostat", act="风机调到循环模式")
    q("turn on the ceiling fan", "on", "Fan", "Ceiling Fan")
    q("ceiling fan to speed 3", "fan_speed", "Fan", "Ceiling Fan", act="风速调到3档")
    q("desk fan on low", "fan_speed", "Fan", "Desk Fan", act="风速调到低速")
    q("make the desk fan oscillate", "swing", "Fan", "Desk Fan", act="开启摇头")
    # media
    q("turn up the TV in the living room", "vol_up", "Television", inc=["Living Room"])
    q("living room TV volume 25", "vol", "Television", inc=["Living Room"], act="音量调到25")
    q("mute the bedroom TV", "mute", "Television", "Bedroom TV")
    q("unmute the living room TV", "unmute", "Television", inc=["Living Room"])
    q("put channel 7 on in the living room", "channel", "Television", inc=["Living Room"], act="切换到7频道")
    q("next channel on the bedroom TV", "ch_up", "Television", "Bedroom TV")
    q("switch the living room TV to HDMI 2", "input", "Television", inc=["Living Room"], act="切换信号源")
    q("play music on the Sonos", "play", "Unknown", "Sonos", act="播放音乐")
    q("pause the Sonos", "pause", "Unknown", "Sonos", act="暂停播放")
    q("turn the Sonos down", "vol_down", "Unknown", "Sonos")
    q("skip to the next song on the office speaker", "next", "NetworkAudio", inc=["Office"])
    # appliances and the rest
    q("start the washer", "washer_state", "Washer", act="开始洗衣")
    q("pause the dryer", "dryer_state", "Dryer", act="暂停烘干")
    q("set the washer to rinse", "washer_mode", "Washer", act="切换到漂洗模式")
    q("dryer on low heat", "dryer_mode", "Dryer", act="切换到低温烘干")
    q("tell Bob to start cleaning", "robot_start", "Unknown", "Bob", act="开始清扫")
    q("send Bob back to the dock", "robot_move", "Unknown", "Bob", act="返回充电")
    q("lock the front door", "lock", "Lock", "Front Door")
    q("unlock the front door", "unlock", "Lock", "Front Door")
    q("open the garage door", "garage_open", "GarageDoor", act="打开车库门")
    q("close the garage", "garage_close", "GarageDoor", act="关闭车库门")
    q("start charging the car", "charge_on", "Charger")
    q("stop charging", "charge_off", "Charger")
    q("set the charger to 16 amps", "charge_current", "Charger")
    q("turn on the coffee maker", "on", "SmartPlug", "Coffee Maker")
    q("turn off the air purifier", "off", "AirPurifier")
    q("purifier to sleep mode", "purifier_mode", "AirPurifier", act="调到睡眠模式")
    q("humidifier on high", "humid_mode", "Humidifier", act="调到高档")
    q("set the fridge to 37 degrees", "cool_sp", "Refrigerator", act="冷藏温度调到37度")
    q("turn on the diffuser", "on", "Unknown", "Diffuser")
    # bulk
    q("turn off all the lights", "off", "Light", quant="all")
    q("turn on every light in the house", "on", "Light", quant="all")
    q("dim all the lights to 20%", "level", "Light", quant="all", act="亮度调到20%")
    q("set all lights to daylight", "ct", "Light", quant="all", act="调成日光色温")
    q("close all the blinds", "shade_close", "Blind", quant="all", act="关闭窗帘")
    q("turn off all the fans", "off", "Fan", quant="all")
    q("turn off all the TVs", "off", "Television", quant="all")
    q("stop all the speakers", "stop", "NetworkAudio", quant="all")
    q("turn off every plug", "off", "SmartPlug", quant="all")
    q("turn off all lights except the master bedroom", "off", "Light", exc=["Master Bedroom"], quant="except")
    q("lights off everywhere but the kids room", "off", "Light", exc=["Kids Room"], quant="except")
    q("turn on all lights except in the kitchen and garage", "on", "Light", exc=["Kitchen", "Garage"],
      quant="except")
    q("open every shade except the kids room", "shade_open", "Blind", exc=["Kids Room"], quant="except",
      act="打开窗帘")
    q("close all blinds except the office", "shade_close", "Blind", exc=["Office"], quant="except", act="关闭窗帘")
    q("turn every light off except in the entryway", "off", "Light", exc=["Entryway"], quant="except")
    q("turn on any light in the living room, doesn't matter which", "on", "Light", inc=["Living Room"],
      quant="any")
    q("play something on any speaker", "play", "NetworkAudio", quant="any", act="播放音乐")


# ---------------------------------------------------------------------------------------------------
# Bulk plans, second batch: more "all"/"except" phrasings per home (other categories, values, names,
# several rooms), written as a whole before any figure was measured on them. They split by id hash
# like every other query.
# ---------------------------------------------------------------------------------------------------
def bulk_more_small(b: Book):
    q = b.q
    q("所有窗帘都关上", "shade_close", "Blind", quant="all", act="关闭窗帘")
    q("把所有空调调到制冷", "ac_mode", "AirConditioner", quant="all", act="调到制冷模式")
    q("所有空调温度调到25度", "temp", "AirConditioner", quant="all", act="温度调到25度")
    q("主卧的灯都关掉", "off", "Light", inc=["主卧"], quant="all")
    q("客厅的灯全部打开", "on", "Light", inc=["客厅"], quant="all")
    q("除了书房，其他灯都打开", "on", "Light", exc=["书房"], quant="except")
    q("除了客厅，其他窗帘都打开", "shade_open", "Blind", exc=["客厅"], quant="except", act="打开窗帘")
    q("全家的灯亮度都调到三十", "level", "Light", quant="all", act="亮度调到30%")
    q("两台空调都打开", "on", "AirConditioner", quant="all")


def bulk_more_medium(b: Book):
    q = b.q
    q("所有空调都关了", "off", "AirConditioner", quant="all")
    q("把所有空调调到26度", "temp", "AirConditioner", quant="all", act="温度调到26度")
    q("除了书房，其他空调都调成制热", "ac_mode", "AirConditioner", exc=["书房"], quant="except",
      act="调到制热模式")
    q("客厅的筒灯全部打开", "on", "Light", "筒灯", inc=["客厅"], quant="all")
    q("所有窗帘都关上", "shade_close", "Blind", quant="all", act="关闭窗帘")
    q("把所有纱帘都拉上", "shade_close", "Blind", "纱帘", quant="all", act="关闭窗帘")
    q("音箱全部暂停一下", "pause", "NetworkAudio", quant="all")
    q("除了厨房，所有音箱音量调到30", "vol", "NetworkAudio", exc=["厨房"], quant="except", act="音量调到30")
    q("把所有插座都关了", "off", "SmartPlug", quant="all")
    q("除了客厅，其他房间的灯都调到50%", "level", "Light", exc=["客厅"], quant="except", act="亮度调到50%")
    q("主卧的窗帘全部打开", "shade_open", "Blind", inc=["主卧"], quant="all", act="打开窗帘")
    q("次卧和儿童房的灯都关掉", "off", "Light", inc=["次卧", "儿童房"], quant="all")
    q("所有吸顶灯都关掉", "off", "Light", "吸顶灯", quant="all")
    q("所有床头灯调暗一点", "dim", "Light", "床头灯", quant="all", act="调暗一点")
    q("两个电视都关掉", "off", "Television", quant="all")
    q("除了主卧，其他电视都关掉", "off", "Television", exc=["主卧"], quant="except")
    q("把两个排气扇都打开", "on", "Switch", "排气扇", quant="all")
    q("所有风扇都打开", "on", "Fan", quant="all")
    q("卫生间的灯都关了", "off", "Light", inc=["主卫", "客卫"], quant="all")
    q("除了餐厅，其他的灯都换成冷光", "ct", "Light", exc=["餐厅"], quant="except", act="调成冷光")


def bulk_more_large(b: Book):
    q = b.q
    q("所有空调都关掉", "off", "AirConditioner", quant="all")
    q("把所有空调温度调到26度", "temp", "AirConditioner", quant="all", act="温度调到26度")
    q("除了老人房，其他空调都调到制热", "ac_mode", "AirConditioner", exc=["老人房"], quant="except",
      act="调到制热模式")
    q("所有电视都关了", "off", "Television", quant="all")
    q("除了影音室，所有电视都静音", "mute", "Television", exc=["影音室"], quant="except")
    q("一楼客厅的窗帘全部关上", "shade_close", "Blind", inc=["一楼客厅"], quant="all", act="关闭窗帘")
    q("把所有窗帘开到30%", "shade_level", "Blind", quant="all", act="开到30%")
    q("车库的灯都关掉", "off", "Light", inc=["车库"], quant="all")
    q("楼梯间的灯都调到30%", "level", "Light", inc=["楼梯间"], quant="all", act="亮度调到30%")
    q("除了花园和车库，其他插座都关掉", "off", "SmartPlug", exc=["花园", "车库"], quant="except")
    q("所有加湿器都打开", "on", "Humidifier", quant="all")
    q("所有净化器都关了", "off", "AirPurifier", quant="all")
    q("除了健身房，所有音箱音量调到15", "vol", "NetworkAudio", exc=["健身房"], quant="except", act="音量调到15")
    q("把庭院灯都关了", "off", "Light", "庭院灯", quant="all")
    q("把餐厅的筒灯全部打开", "on", "Light", "筒灯", inc=["一楼餐厅"], quant="all")
    q("所有地暖都关掉", "thermo_off", "Thermostat", quant="all")
    q("二楼卫生间和主卫的灯全关", "off", "Light", inc=["二楼卫生间", "主卫"], quant="all")
    q("所有排气扇都关掉", "off", "Switch", "排气扇", quant="all")
    q("除了茶室，其他地方的灯都调成暖光", "ct", "Light", exc=["茶室"], quant="except", act="调成暖光")
    q("影音室的筒灯都调暗一点", "dim", "Light", "筒灯", inc=["影音室"], quant="all", act="调暗一点")
    q("所有百叶帘都关上", "shade_close", "Blind", "百叶帘", quant="all", act="关闭窗帘")
    q("除了主卧，其他加湿器都关掉", "off", "Humidifier", exc=["二楼主卧"], quant="except")
    q("所有风扇都打开", "on", "Fan", quant="all")
    q("花园所有灯都关了", "off", "Light", inc=["花园"], quant="all")
    q("全部空调切换到除湿模式", "ac_mode", "AirConditioner", quant="all", act="调到除湿模式")


def bulk_more_en(b: Book):
    q = b.q
    q("turn on all the lights in the kitchen", "on", "Light", inc=["Kitchen"], quant="all")
    q("switch off every light in the master bedroom", "off", "Light", inc=["Master Bedroom"], quant="all")
    q("open all the blinds", "shade_open", "Blind", quant="all", act="打开窗帘")
    q("close every shade except the master bedroom", "shade_close", "Blind", exc=["Master Bedroom"],
      quant="except", act="关闭窗帘")
    q("set all the lights to 50 percent", "level", "Light", quant="all", act="亮度调到50%")
    q("turn off all lights except the living room and office", "off", "Light", exc=["Living Room", "Office"],
      quant="except")
    q("turn on all the fans", "on", "Fan", quant="all")
    q("pause all speakers", "pause", "NetworkAudio", quant="all")
    q("turn off both TVs", "off", "Television", quant="all")
    q("set all lights to warm white", "ct", "Light", quant="all", act="调成暖白光")
    q("turn off all the lamps", "off", "Light", "Lamp", quant="all")
    q("turn on every light except the garage", "on", "Light", exc=["Garage"], quant="except")
    q("dim all the lights in the living room to 30%", "level", "Light", inc=["Living Room"], quant="all",
      act="亮度调到30%")
    q("turn off every fan except the office", "off", "Fan", exc=["Office"], quant="except")
    q("set every speaker volume to 20", "vol", "NetworkAudio", quant="all", act="音量调到20")


HOMES = [(home_small, (queries_small, bulk_more_small)), (home_medium, (queries_medium, bulk_more_medium)),
         (home_large, (queries_large, bulk_more_large)), (home_en, (queries_en, bulk_more_en))]


# ---------------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------------
class Invalid(Exception):
    pass


def validate(home: Home, real: dict | None = None) -> None:
    problems = []
    caps_real = real if real is not None else REAL_CAPABILITIES

    def bad(msg):
        problems.append(f"{home.name}: {msg}")

    room_names = [r["name"] for r in home.room_json]
    if len(set(room_names)) != len(room_names):
        bad("duplicate room names")
    if len({r["roomId"] for r in home.room_json}) != len(home.room_json):
        bad("duplicate roomIds")
    dev_ids = [d["deviceId"] for d in home.device_json]
    if len(set(dev_ids)) != len(dev_ids):
        bad("duplicate deviceIds")
    spec_by_profile = {}
    for line in home.spec:
        if line["profileId"] in spec_by_profile:
            bad(f"profile {line['profileId']} has two spec lines")
        spec_by_profile[line["profileId"]] = line
    room_ids = {r["roomId"] for r in home.room_json}
    used_profiles = set()
    for d in home.device_json:
        main = d["components"][0]
        if main["id"] != "main" or not main["categories"]:
            bad(f"{d['label']}: no main component / category")
        if d["roomId"] not in room_ids:
            bad(f"{d['label']}: roomId not in rooms.json")
        cap_ids = [c["id"] for c in main["capabilities"]]
        for c in cap_ids:
            if c not in caps_real and c not in EXTRA_REAL_CAPABILITIES:
                bad(f"{d['label']}: capability {c!r} is not a real SmartThings capability")
        pid = d["profile"]["id"]
        used_profiles.add(pid)
        if pid not in spec_by_profile:
            bad(f"{d['label']}: profile {pid} has no spec line")
            continue
        for entry in spec_by_profile[pid]["capabilities"]:
            m = re.fullmatch(r"main-([A-Za-z.]+)-([A-Za-z]+)", entry["id"])
            if not m:
                bad(f"spec id {entry['id']!r} is not main-<capability>-<command>")
                continue
            cap, cmd = m.groups()
            if cap not in cap_ids:
                bad(f"{d['label']}: spec command {entry['id']} but the device lacks capability {cap}")
            if cmd not in caps_real.get(cap, {}):
                bad(f"spec command {entry['id']}: {cmd!r} is not a command of {cap}")
                continue
            schema = caps_real[cap][cmd]
            want_type = None if schema is None else ("string" if schema[0] == "object" else schema[0])
            if entry["type"] != want_type:
                bad(f"spec {entry['id']}: type {entry['type']!r}, the real first argument is {want_type!r}")
            vr = entry["value_range"]
            if vr is not None:
                lo, hi = schema[1], schema[2]
                if (lo is not None and vr["min"] < lo) or (hi is not None and vr["max"] > hi) or vr["min"] > vr["max"]:
                    bad(f"spec {entry['id']}: range {vr} outside the real schema [{lo}, {hi}]")
            enum = schema[3] if schema else None
            for v in entry.get("value_list", []):
                if enum is not None and v["value"] not in enum:
                    bad(f"spec {entry['id']}: value {v['value']!r} is not in the real enum")
                if not v["description"]:
                    bad(f"spec {entry['id']}: value {v['value']!r} has no description")
            if not entry["description"]:
                bad(f"spec {entry['id']}: empty description")
    if set(spec_by_profile) != used_profiles:
        bad("spec.jsonl has lines for profiles no device uses")
    # queries
    by_id = {d.device_id: d for d in home.devices}
    spec_cmds = {pid: {e["id"] for e in line["capabilities"]} for pid, line in spec_by_profile.items()}
    ids = [q["id"] for q in home.queries]
    if len(set(ids)) != len(ids):
        bad("duplicate query ids")
    if len({q["query"] for q in home.queries}) != len(home.queries):
        bad("duplicate query texts")
    for qr in home.queries:
        where = f"{qr['id']} {qr['query']!r}"
        ir = qr["ir"]
        if qr["quantifier"] not in QUANTIFIERS or ir["quantifier"] != qr["quantifier"]:
            bad(f"{where}: quantifier")
        if re.search(r"[A-Za-z]", ir["action"]) or not ir["action"]:
            bad(f"{where}: ir.action {ir['action']!r} must be a Chinese phrase without Latin letters")
        if ir["type_hint"] != "Unknown" and ir["type_hint"] not in STANDARD_CATEGORIES:
            bad(f"{where}: type_hint {ir['type_hint']!r}")
        for r in ir["scope_include"] + ir["scope_exclude"]:
            if r not in room_names:
                bad(f"{where}: room {r!r} is not in rooms.json")
        if (qr["quantifier"] == "except") != bool(ir["scope_exclude"]):
            bad(f"{where}: scope_exclude must be set exactly for quantifier except")
        if not qr["expected"]:
            bad(f"{where}: empty expected")
        seen = set()
        for t in qr["expected"]:
            dev = by_id.get(t["device_id"])
            if dev is None:
                bad(f"{where}: unknown device {t['device_id']}")
                continue
            if dev.device_id in seen:
                bad(f"{where}: device {dev.label} listed twice")
            seen.add(dev.device_id)
            alts = t["command_id"] if isinstance(t["command_id"], list) else [t["command_id"]]
            if isinstance(t["command_id"], list) and len(alts) < 2:
                bad(f"{where}: a one-element alternatives list")
            for c in alts:
                if c not in spec_cmds[dev.profile_id]:
                    bad(f"{where}: {c} is not in the spec of {dev.label}")
            if ir["type_hint"] != "Unknown" and dev.category != ir["type_hint"]:
                bad(f"{where}: {dev.label} is a {dev.category}, not a {ir['type_hint']}")
            if dev.room in ir["scope_exclude"]:
                bad(f"{where}: {dev.label} is in an excluded room")
            if ir["scope_include"] and dev.room not in ir["scope_include"]:
                bad(f"{where}: {dev.label} is outside the included rooms")
        if len(qr["query"]) > 80:
            bad(f"{where}: query too long")
    if problems:
        raise Invalid("\n".join(problems))


def cross_check_capabilities(path: Path) -> dict:
    """Rebuild the capability table from capabilities.json and check the embedded copy against it."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    real = {}
    for c in doc["capabilities"]:
        cmds = {}
        for x in c["commands"]:
            if x["arguments"]:
                s = x["arguments"][0]["schema"]
                cmds[x["name"]] = (s.get("type"), s.get("minimum"), s.get("maximum"),
                                   tuple(s["enum"]) if s.get("enum") else None)
            else:
                cmds[x["name"]] = None
        real[c["id"]] = cmds
    for cap, cmds in REAL_CAPABILITIES.items():
        if cap not in real:
            raise Invalid(f"embedded capability {cap!r} is not in {path}")
        for cmd, schema in cmds.items():
            if cmd not in real[cap]:
                raise Invalid(f"embedded command {cap}.{cmd} is not in {path}")
            r = real[cap][cmd]
            if (schema is None) != (r is None) or (schema and (schema[:3] != r[:3] or
                                                              (schema[3] and not set(schema[3]) <= set(r[3] or ())))):
                raise Invalid(f"embedded schema of {cap}.{cmd} differs from {path}: {schema} vs {r}")
    return real


# ---------------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------------
def render(home: Home) -> dict[str, str]:
    def dump(obj):
        return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"

    return {
        "devices.json": dump({"items": home.device_json, "_links": {}}),
        "rooms.json": dump({"items": home.room_json, "_links": {}}),
        "spec.jsonl": "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in home.spec),
        "queries.jsonl": "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in home.queries),
    }


def is_chinese(text: str) -> bool:
    return re.search(r"[\u4e00-\u9fff]", text) is not None


def stats(homes: list[Home]) -> dict:
    out = {}
    for h in homes:
        langs = Counter(h.spec_lang[p] for p in h.spec_lang if PT[p]["cmds"])
        out[h.name] = {
            "devices": len(h.devices), "rooms": len(h.rooms), "profiles": len(h.spec),
            "profiles_en_descriptions": langs["en"], "profiles_with_commands": sum(langs.values()),
            "categories": Counter(d.category for d in h.devices),
            "queries": len(h.queries),
            "quantifiers": Counter(q["quantifier"] for q in h.queries),
            "zh_queries": sum(is_chinese(q["query"]) for q in h.queries),
            "type_hints": Counter(q["ir"]["type_hint"] for q in h.queries),
            "non_bulk_over_10": sum(len(q["expected"]) > 10 for q in h.queries
                                    if q["quantifier"] in ("one", "any")),
            "multi_target": sum(len(q["expected"]) > 1 for q in h.queries),
        }
    return out


def readme(homes: list[Home], st: dict) -> str:
    total_q = sum(s["queries"] for s in st.values())
    total_zh = sum(s["zh_queries"] for s in st.values())
    quant = Counter()
    for s in st.values():
        quant.update(s["quantifiers"])
    blurbs = {
        "home_small": "a one-bedroom flat with a study (Chinese); the design note's failure cases, smallest form",
        "home_medium": "a family flat (Chinese, a few English labels such as `Hue Go`, `Bob`, `Sonos Beam`)",
        "home_large": "a three-storey villa (Chinese; one profile in four described in English)",
        "home_en": "an American house with English rooms, labels, descriptions and queries (generalisation check)",
    }
    lines = [
        "# Bundled smart-home evaluation data",
        "",
        "Generated by `python scripts/generate_smarthome.py` (stdlib only, fixed seed, byte-identical on rerun;",
        "`--check` verifies these files are current). Do not edit by hand: change the generator.",
        "",
        "Each home is a directory in the SmartThings shapes: `devices.json` (GET /v1/devices), `rooms.json`",
        "(GET /v1/locations/{id}/rooms), `spec.jsonl` (one profile a line, `main-<capability>-<command>` entries",
        "with real SmartThings capability and command names) and `queries.jsonl` (labelled utterances).",
        "",
        "| home | what it is | devices | rooms | profiles (English-described) | queries |",
        "|---|---|---|---|---|---|",
    ]
    for h in homes:
        s = st[h.name]
        lines.append(f"| `{h.name}` | {blurbs[h.name]} | {s['devices']} | {s['rooms']} | {s['profiles']} "
                     f"({s['profiles_en_descriptions']}) | {s['queries']} |")
    lines += ["", f"{total_q} queries, {total_zh} Chinese ({100 * total_zh / total_q:.0f}%).", "",
              "## Devices per category", "", "| category | " + " | ".join(h.name for h in homes) + " |",
              "|---|" + "---|" * len(homes)]
    cats = sorted({c for s in st.values() for c in s["categories"]})
    for c in cats:
        lines.append(f"| {c} | " + " | ".join(str(st[h.name]["categories"].get(c, 0)) for h in homes) + " |")
    lines += ["", "## Queries per quantifier", "", "| quantifier | " + " | ".join(h.name for h in homes) +
              " | all homes |", "|---|" + "---|" * (len(homes) + 1)]
    for qn in QUANTIFIERS:
        lines.append(f"| {qn} | " + " | ".join(str(st[h.name]["quantifiers"].get(qn, 0)) for h in homes) +
                     f" | {quant[qn]} ({100 * quant[qn] / total_q:.0f}%) |")
    lines += [
        "",
        "## How the gold labels are defined",
        "",
        "- `expected` is the complete set of (device, command) pairs the user wants run. It is derived from the",
        "  gold parse `ir`: every device of category `type_hint` (any category when `Unknown`) whose label contains",
        "  `name_hint`, inside `scope_include` (when given), outside `scope_exclude`, and whose profile has a command",
        "  for the intent. So `打开主卧的灯` lists every light in 主卧, `关掉所有的灯` every light of the home (never",
        "  a smart plug), and a device named `客厅老伙计` that lives in 书房 is *not* a 客厅 light.",
        "- `command_id` is a list when several commands genuinely fit (调暗一点 → `setLevel` or `stepLevel`;",
        "  opening a blind → `windowShade-open` or its position command).",
        "- `quantifier` follows the words: `all` (所有/全部/都/every), `except` (除了…/except), `any` (随便/any one:",
        "  `expected` lists every acceptable device, running one suffices), else `one` (a definite reference,",
        "  which may resolve to several devices).",
        "- `ir.action` is a Chinese intent phrase without Latin letters, also for English queries; room names in",
        "  `ir` are spelled exactly as in `rooms.json` (the user's 客厅 is `一楼客厅` in home_large).",
        "- Sensors and the hub have spec lines with no commands; `refresh` is left out of every spec (never an",
        "  intent). `Aroma` is deliberately not a standard category: queries about it use `type_hint: Unknown`.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if the files differ")
    ap.add_argument("--capabilities", type=Path, help="capabilities.json to re-verify the embedded definitions")
    args = ap.parse_args(argv)

    real = cross_check_capabilities(args.capabilities) if args.capabilities else None
    homes = []
    for make_home, query_writers in HOMES:
        home = make_home()
        home.build()
        book = Book(home)
        for write_queries in query_writers:
            write_queries(book)
        home.queries = book.finish()
        validate(home, real)
        homes.append(home)
    st = stats(homes)
    files = {f"{h.name}/{name}": text for h in homes for name, text in render(h).items()}
    files["README.md"] = readme(homes, st)

    if args.check:
        stale = [p for p, text in files.items()
                 if not (args.out / p).is_file() or (args.out / p).read_text(encoding="utf-8") != text]
        for p in stale:
            print(f"stale: {args.out / p}")
        return 1 if stale else 0
    for p, text in files.items():
        path = args.out / p
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")

    total = sum(s["queries"] for s in st.values())
    zh = sum(s["zh_queries"] for s in st.values())
    quant = Counter()
    for name, s in st.items():
        quant.update(s["quantifiers"])
        print(f"{name}: {s['devices']} devices, {s['rooms']} rooms, {s['profiles']} profiles "
              f"({s['profiles_en_descriptions']}/{s['profiles_with_commands']} with commands described in English), "
              f"{s['queries']} queries {dict(s['quantifiers'])}, {s['zh_queries']} Chinese, "
              f"{s['multi_target']} multi-target, {s['non_bulk_over_10']} non-bulk with >10 targets")
        print("    categories: " + ", ".join(f"{c}={n}" for c, n in sorted(s["categories"].items())))
    print(f"total: {total} queries, {zh} Chinese ({100 * zh / total:.1f}%), " +
          ", ".join(f"{k}={v} ({100 * v / total:.1f}%)" for k, v in quant.items()))
    print(f"wrote {len(files)} files under {args.out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Invalid as e:
        print(f"INVALID DATASET:\n{e}", file=sys.stderr)
        sys.exit(2)
