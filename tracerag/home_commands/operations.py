"""Which operation an utterance asks for, as a closed set, and the capability commands that perform each.

An operation is what is done, whatever device does it: ``on``, ``set_level``, ``unlock``, ``next`` ... It is
the typed answer to "which operation does the utterance ask for" (``QueryIR.operation``): the rule parser
reads it from the verbs said (``operation_words``), an LM gives it as a typed field, and an IR without one
gets it from its action text. Once the operation is known, the command on each device is no longer a
search: ``PERFORMED_BY`` maps the operation to the capability commands that perform it, in order of
preference, and a device takes its first one that fits the value said. So a correct parse gives the
correct command, and the ranked list and a bulk plan read the same decision.

The set grows from SmartThings' capability catalogue and Home Assistant's intents and services. A command
no entry names (a vendor capability) is reached through the free-text ``action`` and the index's vector
channel, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..device_operations import OPERATIONS
from .devices import CommandSpec


@dataclass(frozen=True)
class Performer:
    """One capability command that performs an operation. ``capability`` "*" matches any capability with
    that command name (a vendor's ``custom.switch`` ``on`` is still on). ``argument`` is the value the
    command is sent with for this operation (``setMute`` "muted" mutes), ``sign`` the direction of a step
    command's amount (``stepLevel`` -10 dims)."""

    capability: str
    command: str
    argument: str | None = None
    sign: int = 0

    def matches(self, spec: CommandSpec) -> bool:
        if spec.command != self.command:
            return False
        if self.capability == "*":  # a command the table names for its capability keeps that meaning only
            if (spec.capability, spec.command) in _NAMED:
                return False
        elif self.capability != spec.capability:
            return False
        return self.argument is None or any(v.value == self.argument for v in spec.value_list) or not spec.value_list


def _p(ref: str, argument: str | None = None, sign: int = 0) -> Performer:
    capability, command = ref.rsplit(".", 1)
    return Performer(capability, command, argument, sign)


def _ps(*refs: str) -> tuple[Performer, ...]:
    return tuple(_p(r) for r in refs)


# operation -> the commands that perform it, most specific first. SmartThings capabilities, then Home
# Assistant services (``homeassistant.COMMANDS``: the capability is the domain), then any capability's
# command of that name.
PERFORMED_BY: dict[str, tuple[Performer, ...]] = {
    "on": _ps("switch.on", "outlet.on", "light.turn_on", "switch.turn_on", "fan.turn_on", "climate.turn_on",
              "media_player.turn_on", "humidifier.turn_on", "*.on", "*.turn_on",
              # a thermostat with no switch is on when it heats (地暖打开); a siren sounds
              "thermostatMode.heat", "thermostatMode.auto", "alarm.both", "alarm.siren"),
    "off": _ps("switch.off", "outlet.off", "alarm.off", "light.turn_off", "switch.turn_off", "fan.turn_off",
               "climate.turn_off", "media_player.turn_off", "humidifier.turn_off", "*.off", "*.turn_off"),
    "toggle": _ps("*.toggle"),
    "set_level": _ps("switchLevel.setLevel", "light.set_brightness", "windowShadeLevel.setShadeLevel",
                     "cover.set_cover_position", "fanSpeedPercent.setPercent", "fan.set_percentage"),
    "level_up": (_p("statelessSwitchLevelStep.stepLevel", sign=1), *_ps("switchLevel.setLevel",
                                                                       "light.set_brightness")),
    "level_down": (_p("statelessSwitchLevelStep.stepLevel", sign=-1), *_ps("switchLevel.setLevel",
                                                                         "light.set_brightness")),
    "set_color": _ps("colorControl.setColor", "colorControl.setHue", "light.set_color"),
    "set_color_temperature": _ps("colorTemperature.setColorTemperature", "light.set_color_temp"),
    "warmer": (_p("statelessColorTemperatureStep.stepColorTemperatureByPercent", sign=-1),
               *_ps("colorTemperature.setColorTemperature", "light.set_color_temp")),
    "cooler": (_p("statelessColorTemperatureStep.stepColorTemperatureByPercent", sign=1),
               *_ps("colorTemperature.setColorTemperature", "light.set_color_temp")),
    "open": _ps("windowShade.open", "doorControl.open", "garageDoorControl.open", "valve.open",
                "cover.open_cover", "valve.open_valve", "*.open"),
    "close": _ps("windowShade.close", "doorControl.close", "garageDoorControl.close", "valve.close",
                 "cover.close_cover", "valve.close_valve", "*.close"),
    "stop": (*_ps("mediaPlayback.stop", "media_player.media_stop", "windowShade.pause", "cover.stop_cover",
                  "ovenOperatingState.stop", "evseChargingSession.disableCharging", "vacuum.stop"),
             _p("washerOperatingState.setMachineState", "stop"), _p("dryerOperatingState.setMachineState", "stop"),
             _p("robotCleanerMovement.setRobotCleanerMovement", "idle"), *_ps("*.stop")),
    "set_position": _ps("windowShadeLevel.setShadeLevel", "cover.set_cover_position", "switchLevel.setLevel"),
    "set_tilt": _ps("windowShadeTiltLevel.setShadeTiltLevel", "cover.set_cover_tilt_position"),
    "lock": _ps("lock.lock"),
    "unlock": _ps("lock.unlock", "lock.unlatch", "lock.open"),
    "arm": _ps("securitySystem.armAway", "securitySystem.armStay", "alarm_control_panel.alarm_arm_away",
               "alarm_control_panel.alarm_arm_home"),
    "disarm": _ps("securitySystem.disarm", "alarm_control_panel.alarm_disarm"),
    "play": _ps("mediaPlayback.play", "media_player.media_play", "*.play"),
    "pause": (*_ps("mediaPlayback.pause", "media_player.media_pause", "vacuum.pause", "windowShade.pause",
                   "cover.stop_cover"), _p("washerOperatingState.setMachineState", "pause"),
              _p("dryerOperatingState.setMachineState", "pause"),
              _p("robotCleanerMovement.setRobotCleanerMovement", "pause"), *_ps("*.pause")),
    "next": _ps("mediaTrackControl.nextTrack", "media_player.media_next_track"),
    "previous": _ps("mediaTrackControl.previousTrack", "media_player.media_previous_track"),
    "set_volume": _ps("audioVolume.setVolume", "media_player.volume_set"),
    "volume_up": _ps("audioVolume.volumeUp", "media_player.volume_up", "audioVolume.setVolume",
                     "media_player.volume_set"),
    "volume_down": _ps("audioVolume.volumeDown", "media_player.volume_down", "audioVolume.setVolume",
                       "media_player.volume_set"),
    "mute": (*_ps("audioMute.mute"), _p("audioMute.setMute", "muted"), _p("media_player.mute", "true")),
    "unmute": (*_ps("audioMute.unmute"), _p("audioMute.setMute", "unmuted"), _p("media_player.mute", "false")),
    "channel_up": _ps("tvChannel.channelUp"),
    "channel_down": _ps("tvChannel.channelDown"),
    "set_channel": _ps("tvChannel.setTvChannel"),
    "set_input": _ps("mediaInputSource.setInputSource", "media_player.select_source"),
    "set_temperature": _ps("thermostatCoolingSetpoint.setCoolingSetpoint",
                           "thermostatHeatingSetpoint.setHeatingSetpoint", "ovenSetpoint.setOvenSetpoint",
                           "climate.set_temperature", "water_heater.set_temperature"),
    "temperature_up": _ps("thermostatCoolingSetpoint.setCoolingSetpoint",
                          "thermostatHeatingSetpoint.setHeatingSetpoint", "climate.set_temperature"),
    "temperature_down": _ps("thermostatCoolingSetpoint.setCoolingSetpoint",
                            "thermostatHeatingSetpoint.setHeatingSetpoint", "climate.set_temperature"),
    "set_mode": _ps("airConditionerMode.setAirConditionerMode", "thermostatMode.setThermostatMode",
                    "custom.airConditionerOptionalMode.setAcOptionalMode", "washerMode.setWasherMode",
                    "dryerMode.setDryerMode", "robotCleanerCleaningMode.setRobotCleanerCleaningMode",
                    "humidifierMode.setHumidifierMode", "fanOscillationMode.setFanOscillationMode",
                    "mediaPlaybackRepeat.setPlaybackRepeatMode", "mediaPlaybackShuffle.setPlaybackShuffle",
                    "robotCleanerTurboMode.setRobotCleanerTurboMode", "thermostatMode.heat", "thermostatMode.cool",
                    "thermostatMode.auto", "thermostatMode.emergencyHeat", "climate.set_hvac_mode",
                    "fan.set_preset_mode", "fan.oscillate", "humidifier.set_mode", "climate.set_swing_mode",
                    "water_heater.set_operation_mode", "light.set_effect",
                    # a fan's modes are modes too ("净化器调到睡眠模式"): the value named picks the command
                    "airPurifierFanMode.setAirPurifierFanMode", "fanMode.setFanMode",
                    "airConditionerFanMode.setFanMode", "thermostatFanMode.setThermostatFanMode",
                    "mediaPresets.playPreset"),
    "set_fan_speed": _ps("fanSpeed.setFanSpeed", "airConditionerFanMode.setFanMode", "fanMode.setFanMode",
                         "airPurifierFanMode.setAirPurifierFanMode", "thermostatFanMode.setThermostatFanMode",
                         "fanSpeedPercent.setPercent", "fan.set_percentage", "climate.set_fan_mode",
                         "vacuum.set_fan_speed"),
    "fan_speed_up": _ps("fanSpeed.setFanSpeed", "fan.set_percentage", "fanSpeedPercent.setPercent",
                        "airConditionerFanMode.setFanMode", "fanMode.setFanMode", "climate.set_fan_mode"),
    "fan_speed_down": _ps("fanSpeed.setFanSpeed", "fan.set_percentage", "fanSpeedPercent.setPercent",
                          "airConditionerFanMode.setFanMode", "fanMode.setFanMode", "climate.set_fan_mode"),
    "set_current": _ps("evseChargingSession.setMaxCurrent"),
    "start": (_p("robotCleanerMovement.setRobotCleanerMovement", "cleaning"),
              _p("washerOperatingState.setMachineState", "run"), _p("dryerOperatingState.setMachineState", "run"),
              _p("dishwasherOperatingState.setMachineState", "run"),
              *_ps("ovenOperatingState.start", "evseChargingSession.enableCharging", "vacuum.start", "*.start")),
    "preset": _ps("windowShadePreset.presetPosition", "mediaPresets.playPreset"),
    "return_home": (_p("robotCleanerMovement.setRobotCleanerMovement", "homing"), *_ps("vacuum.return_to_base")),
    "other": (),
}

# the commands the table names with their capability ("lock.open" is an unlock, never a plain open)
_NAMED = frozenset((p.capability, p.command) for ps in PERFORMED_BY.values() for p in ps if p.capability != "*")

# What an operation means on a device that has no command for it: the first of these it has. "on" and "off"
# as Home Assistant reads them (HassTurnOn opens a cover or a valve, HassTurnOff closes it), then as a cycle
# is run ("turn on the vacuum": it cleans); an alarm panel switched off is disarmed ("Nightwatch off"); "start" and
# "stop" on a device that only switches ("start the plug");
# "open" on a door's lock ("把次卧的门打开": the bedroom door's lock unlocks).
STANDS_FOR = {"on": ("open", "start"), "off": ("close", "stop", "disarm"), "start": ("on",), "stop": ("off",),
              "open": ("unlock",)}


@cache
def performers(operation: str, spec: CommandSpec) -> Performer | None:
    """The table's entry through which ``spec`` performs ``operation``, or None."""
    return next((p for p in PERFORMED_BY.get(operation, ()) if p.matches(spec)), None)


@cache
def rank_in(operation: str, spec: CommandSpec) -> int:
    """Where ``spec`` stands among the commands performing ``operation`` (0 first; -1: it does not)."""
    return next((i for i, p in enumerate(PERFORMED_BY.get(operation, ())) if p.matches(spec)), -1)


@cache
def operations_of(spec: CommandSpec) -> frozenset[str]:
    """Every operation the command performs ("main-lock-unlock": unlock)."""
    return frozenset(op for op in OPERATIONS if performers(op, spec) is not None)
