#!/bin/bash
# The oracle uses a file of its own folder: solution/ reaches the container whole.
bash "$(dirname "$0")/count.sh" /data/poem.txt > /data/count.txt
