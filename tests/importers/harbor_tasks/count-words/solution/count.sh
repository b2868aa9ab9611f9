#!/bin/bash
wc -w < "$1" | tr -d ' '
